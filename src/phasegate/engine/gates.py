"""Human decisions: persisted as pending before they are asked, answered before anything acts.

One mechanism for every decision a person makes, the workflow's own gates
(seed 003's UD-APPROVE-DESIGN, seed 002's planning limit) and the engine's
(a transition warning, a phase found half done):

1. the decision is written to the engine state, ``status: pending``, and the
   state is committed (fsync'd) BEFORE it is asked;
2. an answer (a canonical choice, a note, who gave it: ``prompt``, ``flag``,
   ``command``, ``default`` or ``timeout``) is journaled and committed BEFORE
   anything acts on it, then read back from disk;
3. without a terminal, flag or default, the run stops with exit 3 and says how
   to answer: ``phasegate answer ITEM DECISION CHOICE``.

``phasegate answer`` and the dashboard answer through
:func:`phasegate.engine.answers.answer_decision`: under the item's lock, a
decision already answered is refused (the loser of two concurrent answers gets
a clear message) and the answer is journaled, so a run waiting on it
(``run --wait``) or the next run finds it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from phasegate.engine.answers import (
    Answer,
    Question,
    answer_command,
    apply_answer,
    canonical,
    classified,
    split_choice,
)
from phasegate.engine.state import EngineState
from phasegate.errors import BadInputError, BlockedError, WaitingForHuman
from phasegate.faults import crash_point
from phasegate.state.journal import utc_now

if TYPE_CHECKING:
    from phasegate.engine.run import Run

POLL_SECONDS = 0.5


# -- the run side -----------------------------------------------------------------------


def ask(run: Run, q: Question) -> Answer:
    """Ask ``q`` (or take its recorded answer); raise WaitingForHuman when nobody can answer."""
    state, item = run.state, run.item
    record = state.decisions.get(q.id)
    fresh = record is None or int(record.get("visit", 0)) != q.visit
    if (
        fresh
        and q.default is not None
        and q.id not in run.presets
        and not (q.ask_at_terminal and run.asker.interactive)
    ):
        # Nobody is asked: the documented default applies; journaled, never pending.
        item.record("decision", id=q.id, answer=q.default, by="default", question=q.question)
        return Answer(q.default, "", "default")
    if record is None or fresh:
        # Journaled by a run killed before it committed the pending decision: not again.
        needed = item.recorded().needed(q.id, q.visit)
        record = {
            "id": q.id,
            "visit": q.visit,
            "question": q.question,
            "choices": dict(q.choices),
            "files": list(q.files),
            "recommendation": q.recommendation,
            "notes_required": list(q.notes_required),
            "default": q.default,
            "context": q.context,
            **({"amount_notes": list(q.amount_notes)} if q.amount_notes else {}),
            **({"whole_amounts": True} if q.whole_amounts else {}),
            "status": "pending",
            "asked_at": str(needed["ts"]) if needed and needed.get("ts") else utc_now(),
            "answer": None,
        }
        state.decisions[q.id] = record
        if needed is None:
            item.record(
                "decision.needed",
                id=q.id,
                visit=q.visit,
                question=q.question,
                choices=list(q.choices),
                sync_now=True,
            )
            crash_point("gate.needed")
        run.save(durable=True)  # pending on disk BEFORE it is asked
        crash_point("gate.pending")
    if record.get("status") == "answered" and record.get("answer"):
        found = record["answer"]
        return Answer(str(found["choice"]), str(found.get("note") or ""), str(found.get("by")))
    journaled = item.recorded().answer(q.id, q.visit)
    if journaled is not None:
        return _persist(
            run,
            q,
            Answer(
                str(journaled["choice"]),
                str(journaled.get("note") or ""),
                str(journaled.get("by") or "command"),
            ),
            journal=False,
        )
    # An answer given on the command line answers the decision once: a gate reached
    # again in the same run (say a budget it extended is spent again) asks again.
    preset = run.presets.pop(q.id, None)
    if preset is not None:
        preset = classified(item, state, record, preset)
        wanted = split_choice(preset)[0]
        if wanted in q.unavailable:
            raise BlockedError(q.unavailable[wanted])
        given = canonical(record, preset)
        return _persist(run, q, Answer(given.choice, given.note, "flag"))
    if q.timeout_minutes is not None and q.timeout_choice and _expired(record, q.timeout_minutes):
        return _persist(run, q, Answer(q.timeout_choice, "no answer in time", "timeout"))
    asker = run.asker
    if q.ask_at_terminal and asker.interactive:
        return _persist(run, q, _prompt(run, q, record))
    if q.default is not None:
        return _persist(run, q, Answer(q.default, "", "default"))
    if run.options.wait:
        return _persist(run, q, _wait(run, q, record), journal=False)
    how = answer_command(item.name, q.id, list(q.choices), q.recommendation, list(q.notes_required))
    message = q.unanswered_message or f"{q.question}"
    text = f"{message} Answer with: {how} (choices: {', '.join(q.choices)})"
    if q.unanswered_exit == "blocked":
        raise BlockedError(message)
    raise WaitingForHuman(text)


def _expired(record: Mapping[str, Any], minutes: float) -> bool:
    left = _seconds_left(record, minutes)
    return left is not None and left <= 0


def _seconds_left(record: Mapping[str, Any], minutes: float) -> float | None:
    """Seconds until a gate asked at ``record['asked_at']`` times out (``None``: unknown)."""
    from datetime import UTC, datetime

    try:
        asked = datetime.strptime(str(record.get("asked_at")), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return minutes * 60 - (datetime.now(UTC).replace(tzinfo=None) - asked).total_seconds()


def _timed_choice(run: Run, q: Question, record: Mapping[str, Any]) -> Any:
    """How to ask within the gate's time limit (``None``: ask without one).

    An asker that can wait a bounded time offers ``choose_within(question, choices,
    default, seconds)``, which returns ``None`` when nobody answered in time.
    """
    within = getattr(run.asker, "choose_within", None)
    if q.timeout_minutes is None or not q.timeout_choice or not callable(within):
        return None
    minutes = q.timeout_minutes

    def choose(text: str, offered: Sequence[str], default: str | None) -> str | None:
        left = _seconds_left(record, minutes)
        seconds = max(left if left is not None else minutes * 60, 0.0)
        found: str | None = within(text, offered, default, seconds)
        return found

    return choose


def _prompt(run: Run, q: Question, record: Mapping[str, Any] | None = None) -> Answer:
    classify = run.classifier(q)
    choices = list(q.choices)
    lines = [q.question]
    for name, description in q.choices.items():
        lines.append(f"  {name}" + (f": {description}" if description else ""))
    if q.files:
        lines.append("Files: " + ", ".join(q.files))
    if q.recommendation:
        lines.append(f"Recommended: {q.recommendation}")
    text = "\n".join(lines)
    offered = list(choices)
    if q.files:
        offered.insert(max(len(offered) - 1, 0), "view")  # view comes before the last choice
    timed = _timed_choice(run, q, record or {})
    # Enter takes the recommendation, else the default; without either it takes nothing.
    default = None if q.explicit else (q.recommendation or q.default)
    for _ in range(q.attempts):
        if timed is not None:
            found = timed(text, offered, default)
            if found is None:
                assert q.timeout_choice is not None
                return Answer(q.timeout_choice, "no answer in time", "timeout")
            raw = found
        else:
            raw = run.asker.choose(text, offered, default)
        if raw.strip() == "view" and "view" in offered:
            _show_files(run, q.files)
            offered.remove("view")
            continue
        picked = classify(raw) if classify is not None else raw
        try:
            given = canonical(
                {
                    "id": q.id,
                    "choices": q.choices,
                    "notes_required": q.notes_required,
                    "amount_notes": q.amount_notes,
                    "whole_amounts": q.whole_amounts,
                },
                picked,
            )
        except BadInputError as exc:
            run.item.record("decision.invalid", id=q.id, answer=raw, reason=str(exc))
            continue
        note = given.note or (split_choice(raw)[1] if picked != raw else "")
        return Answer(given.choice, note, "prompt")
    return Answer("invalid", f"no valid answer after {q.attempts} attempts", "prompt")


def _show_files(run: Run, files: Sequence[str]) -> None:
    """``view`` at a gate: the files it names, each with its content."""
    from phasegate.engine.prompting import MAX_ARTIFACT_CHARS, clip, read_inside

    parts = []
    for name in files:
        path = run.item.item_dir / name
        text = read_inside(path, (run.item.repo, run.item.item_dir))
        shown = clip(text, MAX_ARTIFACT_CHARS) if text is not None else "(missing)"
        parts.append(f"--- {run.item.relative(path, run.state)}\n{shown}")
    text = run.item.redactor.text("\n".join(parts))
    if run.options.viewer is not None:
        run.options.viewer(text)
    else:
        show = getattr(run.asker, "show", None)
        if callable(show):
            show(text)


def _wait(run: Run, q: Question, record: Mapping[str, Any]) -> Answer:
    item = run.item
    how = answer_command(item.name, q.id, list(q.choices), q.recommendation, list(q.notes_required))
    item.record("decision.waiting", id=q.id, command=how)
    while True:
        time.sleep(POLL_SECONDS)
        for _, _, event in item.journal.tail(run.state.journal_offset, run.state.journal_lines + 1):
            item.recorded().add(event)
        found = item.recorded().answer(q.id, q.visit)
        if found is not None:
            return Answer(
                str(found["choice"]),
                str(found.get("note") or ""),
                str(found.get("by") or "command"),
            )
        if (
            q.timeout_minutes is not None
            and q.timeout_choice
            and _expired(record, q.timeout_minutes)
        ):
            item.record(
                "decision.answered",
                id=q.id,
                visit=q.visit,
                choice=q.timeout_choice,
                note="no answer in time",
                by="timeout",
                sync_now=True,
            )
            return Answer(q.timeout_choice, "no answer in time", "timeout")


def _persist(run: Run, q: Question, answer: Answer, *, journal: bool = True) -> Answer:
    """Record the answer durably, then read it back from disk before acting on it."""
    state, item = run.state, run.item
    if journal:
        item.record(
            "decision.answered",
            id=q.id,
            visit=q.visit,
            choice=answer.choice,
            note=answer.note,
            by=answer.by,
            sync_now=True,
        )
    apply_answer(state, q.id, answer)
    item.applied(f"decision:{q.id}:{q.visit}")
    item.record(
        "decision",
        id=q.id,
        answer=answer.choice,
        note=answer.note,
        by=answer.by,
        question=q.question,
    )
    run.save(durable=True)
    on_disk = EngineState.decode(item.engine_path.read_bytes(), item.engine_path)
    stored = on_disk.decisions.get(q.id) or {}
    if (
        stored.get("status") != "answered"
        or (stored.get("answer") or {}).get("choice") != answer.choice
    ):
        raise BlockedError(
            f"decision {q.id} of {item.name} could not be verified on disk after answering it "
            f"({item.engine_path}); run again"
        )
    return answer
