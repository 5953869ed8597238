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
(``run --wait``), a prompt asking it at a terminal, or the next run finds it.
The first answer recorded wins: one typed at the prompt after it is told it came
too late, and the recorded one is used.
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
            **_asked_now(q),
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
    elif record.get("status") == "pending" and _asked_differently(record, q):
        # The workflow changed while the decision waited (a choice renamed, the question
        # reworded): it is asked as it is now, so `decisions` and `answer` take its choices.
        record.update(_asked_now(q))
        run.save(durable=True)
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
        given = canonical(record, preset, given_as="--answer")
        by = "default" if q.id in run.options.default_answers else "flag"
        return _persist(run, q, Answer(given.choice, given.note, by))
    if q.timeout_minutes is not None and q.timeout_choice and _expired(record, q.timeout_minutes):
        return _persist(run, q, Answer(q.timeout_choice, "no answer in time", "timeout"))
    asker = run.asker
    how = answer_command(item.name, q.id, list(q.choices), q.recommendation, list(q.notes_required))
    if q.ask_at_terminal and asker.interactive:
        _announce(run, f"{q.question} Answer at the terminal or with: {how}")
        given, elsewhere = _prompt(run, q, record)
        return _persist(run, q, given, journal=not elsewhere)
    if q.default is not None:
        return _persist(run, q, Answer(q.default, "", "default"))
    if run.options.wait:
        _announce(run, f"{q.question} Answer with: {how}")
        return _persist(run, q, _wait(run, q, record), journal=False)
    message = q.unanswered_message or f"{q.question}"
    text = f"{message} Answer with: {how} (choices: {', '.join(q.choices)})"
    if q.unanswered_exit == "blocked":
        raise BlockedError(message)
    raise WaitingForHuman(text)


def _asked_now(q: Question) -> dict[str, Any]:
    """What a pending decision's record says of how ``q`` is asked."""
    return {
        "question": q.question,
        "choices": dict(q.choices),
        "files": list(q.files),
        "recommendation": q.recommendation,
        "notes_required": list(q.notes_required),
        "default": q.default,
    }


def _asked_differently(record: Mapping[str, Any], q: Question) -> bool:
    """Whether the pending ``record`` was asked otherwise than ``q`` is asked now."""
    return any(record.get(key) != value for key, value in _asked_now(q).items())


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


def _journaled_answer(run: Run, q: Question) -> Answer | None:
    """The answer to ``q``'s visit already in the journal, if one is: given with ``phasegate
    answer`` or on the dashboard while this run asks (read from the journal's tail)."""
    item = run.item
    found = item.recorded().answer(q.id, q.visit)
    if found is None:
        state = run.state
        for _, _, event in item.journal.tail(state.journal_offset, state.journal_lines + 1):
            if (
                event.get("event") == "decision.answered"
                and event.get("id") == q.id
                and event.get("visit") == q.visit
            ):
                item.recorded().add(event)
                found = item.recorded().answer(q.id, q.visit)
                break
    if found is None:
        return None
    return Answer(
        str(found["choice"]), str(found.get("note") or ""), str(found.get("by") or "command")
    )


def _announce(run: Run, text: str) -> None:
    """Tell whoever the run's asker tells (its ``on_waiting``: the ``waiting``
    notification) that the run now waits for a person, who answers as ``text`` says."""
    on_waiting = getattr(run.asker, "on_waiting", None)
    if callable(on_waiting):
        on_waiting(text)


def _tell(run: Run, text: str) -> None:
    """Say ``text`` to the person at the prompt (an asker without ``show`` is not told)."""
    show = getattr(run.asker, "show", None)
    if callable(show):
        show(text)


def _said(answer: Answer) -> str:
    """``drop (by command)``, ``revise: more tests (by page)``."""
    note = f": {answer.note}" if answer.note else ""
    return f"{answer.choice}{note} (by {answer.by})"


def _chooser(run: Run, q: Question, record: Mapping[str, Any]) -> Any:
    """How to ask: ``ask(text, choices, default) -> str | None``, ``None`` when the gate's
    time ran out or the decision was answered elsewhere meanwhile.

    An asker that can watch while it waits offers ``choose_watching(question, choices,
    default, seconds, stop)``: it returns ``None`` once ``seconds`` (``None``: no limit)
    have passed or ``stop()`` says so, which it asks about twice a second. Otherwise
    ``choose_within(question, choices, default, seconds)`` asks within the gate's time
    limit, and ``choose`` without one.
    """
    asker = run.asker
    timed = q.timeout_minutes is not None and bool(q.timeout_choice)
    minutes = q.timeout_minutes or 0.0

    def seconds() -> float | None:
        if not timed:
            return None
        left = _seconds_left(record, minutes)
        return max(left if left is not None else minutes * 60, 0.0)

    watching = getattr(asker, "choose_watching", None)
    if callable(watching):

        def watch(text: str, offered: Sequence[str], default: str | None) -> str | None:
            found: str | None = watching(
                text,
                offered,
                default,
                seconds(),
                lambda: _journaled_answer(run, q) is not None,
            )
            return found

        return watch
    within = getattr(asker, "choose_within", None)
    if timed and callable(within):

        def choose(text: str, offered: Sequence[str], default: str | None) -> str | None:
            found: str | None = within(text, offered, default, seconds())
            return found

        return choose
    return asker.choose


def _prompt(run: Run, q: Question, record: Mapping[str, Any] | None = None) -> tuple[Answer, bool]:
    """The answer to ``q`` at the terminal, and whether it was recorded elsewhere (by
    ``phasegate answer`` or the dashboard while the prompt waited)."""
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
    ask = _chooser(run, q, record or {})
    # Enter takes the recommendation, else the default; without either it takes nothing.
    default = None if q.explicit else (q.recommendation or q.default)
    for _ in range(q.attempts):
        try:
            raw = ask(text, offered, default)
        except KeyboardInterrupt:
            # Ctrl-C at the prompt: the decision waits, as status says; name both ways on.
            from phasegate.interrupts import advise_resume

            how = answer_command(
                run.item.name, q.id, list(q.choices), q.recommendation, list(q.notes_required)
            )
            advise_resume(
                f"decision {q.id} of {run.item.name} waits: answer it with: {how}, "
                "or run the same command again to be asked"
            )
            raise
        except EOFError:
            # Ctrl-D (or the end of the input): nobody answers here now.
            how = answer_command(
                run.item.name, q.id, list(q.choices), q.recommendation, list(q.notes_required)
            )
            raise WaitingForHuman(
                f"no answer to decision {q.id} of {run.item.name} (the terminal's input "
                f"ended); answer with: {how} (choices: {', '.join(q.choices)})"
            ) from None
        if raw is None:
            elsewhere = _journaled_answer(run, q)
            if elsewhere is not None:
                _tell(run, f"{q.id} was answered elsewhere: {_said(elsewhere)}; going on with it")
                return elsewhere, True
            assert q.timeout_choice is not None
            return Answer(q.timeout_choice, "no answer in time", "timeout"), False
        if raw.strip() == "view" and "view" in offered:
            _show_files(run, q.files)
            offered.remove("view")
            continue
        said = q.aliases.get(raw.strip().lower())
        picked = said if said is not None else classify(raw) if classify is not None else raw
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
        return Answer(given.choice, note, "prompt"), False
    if q.out_of_attempts == "wait":
        # No choice of the person's: the decision waits, as after Ctrl-D.
        how = answer_command(
            run.item.name, q.id, list(q.choices), q.recommendation, list(q.notes_required)
        )
        raise WaitingForHuman(
            f"no valid answer to decision {q.id} of {run.item.name} in {q.attempts} attempts; "
            f"answer with: {how} (choices: {', '.join(q.choices)})"
        )
    return Answer("invalid", f"no valid answer after {q.attempts} attempts", "prompt"), False


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
    earlier: Answer | None = None
    if journal:
        # Under the item's lock, as ``phasegate answer`` and the dashboard answer: the first
        # answer recorded wins, and a later one is told it came too late.
        with item.locked():
            earlier = _journaled_answer(run, q)
            if earlier is None:
                item.record(
                    "decision.answered",
                    id=q.id,
                    visit=q.visit,
                    choice=answer.choice,
                    note=answer.note,
                    by=answer.by,
                    sync_now=True,
                )
        if earlier is not None:
            item.record("decision.late", id=q.id, visit=q.visit, answer=answer.choice, by=answer.by)
            _tell(
                run,
                f"{answer.choice!r} came too late: {q.id} was already answered: "
                f"{_said(earlier)}; going on with that answer",
            )
            answer = earlier
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
