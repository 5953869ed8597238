"""What a human decision is, and how one is answered: checked, journaled, applied.

A decision's record in the engine state holds its question, choices and
status; an answer must be one of its choices (a note may follow after ``:``).
``phasegate answer`` and the dashboard answer through :func:`answer_decision`;
a run asks through :mod:`phasegate.engine.gates`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from phasegate.engine.item import WorkItem
from phasegate.engine.state import EngineState
from phasegate.errors import AlreadyAnsweredError, BadInputError, StorageError
from phasegate.state.journal import utc_now

AnsweredBy = Literal["prompt", "flag", "command", "default", "timeout", "page", "dashboard"]


@dataclass(frozen=True)
class Answer:
    """A decision's answer: the canonical choice, an optional note, who gave it."""

    choice: str
    note: str = ""
    by: str = "prompt"


@dataclass(frozen=True)
class Question:
    """A decision to ask."""

    id: str
    question: str
    choices: Mapping[str, str]  # choice -> description
    visit: int
    files: Sequence[str] = ()
    default: str | None = None
    recommendation: str | None = None
    notes_required: Sequence[str] = ()
    timeout_minutes: float | None = None
    timeout_choice: str | None = None
    ask_at_terminal: bool = True
    unanswered_exit: Literal["waiting", "blocked"] = "waiting"
    unanswered_message: str = ""
    attempts: int = 3
    context: str = ""
    #: Choices not offered now, and what choosing one anyway says.
    unavailable: Mapping[str, str] = field(default_factory=dict)
    #: An empty answer at a terminal is no answer (no default is offered).
    explicit: bool = False
    #: Choices whose note, when given, must be an amount (see :func:`parse_amount`).
    amount_notes: Sequence[str] = ()
    #: The amounts of ``amount_notes`` are whole numbers (a tokens cap's raise).
    whole_amounts: bool = False
    #: Words typed at the terminal that mean a choice (``yes`` -> ``proceed``).
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: After ``attempts`` refused answers at the terminal: ``invalid`` is the answer (a
    #: workflow gate's outcome ``invalid``), or ``wait``: the decision stays pending and
    #: the run stops (exit 3) naming the command that answers it.
    out_of_attempts: Literal["invalid", "wait"] = "wait"


def split_choice(raw: str) -> tuple[str, str]:
    """``"changes-requested: fix X"`` -> ``("changes-requested", "fix X")``."""
    choice, sep, note = raw.partition(":")
    return (choice.strip(), note.strip()) if sep else (raw.strip(), "")


#: The largest amount a note may give (a budget raise): in USD, and in whole tokens. More is
#: a typo, not a budget; it would also no longer add up exactly to the configured cap.
MAX_AMOUNT = 1_000_000
MAX_WHOLE_AMOUNT = 1_000_000_000_000


def parse_amount(note: str, *, whole: bool = False) -> float | None:
    """A note's amount (``2.5``, ``$2.5``, ``2.5$``, ``2.5 USD``, ``+500000``, ``500_000``,
    ``1,500 tokens``: as phasegate writes amounts), ``None`` if it is not a positive number up
    to :data:`MAX_AMOUNT` (``whole``: :data:`MAX_WHOLE_AMOUNT`)."""
    text = note.strip().lstrip("+").lstrip("$").strip()
    unit = re.search(r"\s*(tokens?)$" if whole else r"\s*(\$|usd)$", text, flags=re.IGNORECASE)
    text = text[: unit.start()] if unit else text
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d*)?", text):
        text = text.replace(",", "")  # thousands grouped as status writes them: 1,500
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value <= (MAX_WHOLE_AMOUNT if whole else MAX_AMOUNT) else None


def canonical(
    question: Mapping[str, Any], raw: str, note: str = "", *, given_as: str = "answer"
) -> Answer:
    """Check ``raw`` is one of the decision's choices (a note may follow after ``:``).

    ``given_as`` is where the answer came from, for the advice on a missing note:
    ``answer`` (``phasegate answer``, which has ``--note``), ``--answer`` (``run
    --answer ID=CHOICE``, whose note follows the choice) or ``dashboard`` (its form's
    Note field, the API's ``note``)."""
    choice, inline_note = split_choice(raw)
    choices = list(question.get("choices") or {})
    if choice not in choices:
        # Choices are exact: one spelt in another case is named, not taken.
        alike = [c for c in choices if c.lower() == choice.lower()]
        mean = f"; did you mean {alike[0]!r}?" if alike else ""
        raise BadInputError(
            f"{raw!r} is not a choice of decision {question.get('id')!r} "
            f"(choices: {', '.join(choices)}){mean}"
        )
    note, inline_note = note.strip(), inline_note.strip()
    if note and inline_note:
        raise BadInputError(
            f"two notes for decision {question.get('id')!r}: {inline_note!r} in "
            f"'{choice}: ...' and {note!r} from --note; give one of them"
        )
    text = note or inline_note
    if choice in (question.get("notes_required") or []) and not text:
        example = (
            f'e.g. --answer "{question.get("id")}={choice}: what to change"'
            if given_as == "--answer"
            else 'write it in the Note field (the API: "note")'
            if given_as == "dashboard"
            else f"e.g. '{choice}: what to change', or --note TEXT"
        )
        raise BadInputError(
            f"choice {choice!r} of decision {question.get('id')!r} needs a note saying what "
            f"({example})"
        )
    if text and choice in (question.get("amount_notes") or []):
        # The choice's advice ('raise: AMOUNT') given as the note itself: the amount is its note.
        named, sep, rest = text.partition(":")
        amount_text = rest.strip() if sep and named.strip().lower() == choice.lower() else text
        whole = bool(question.get("whole_amounts"))
        value = parse_amount(amount_text, whole=whole)
        if value is None or (whole and value != int(value)):
            kind, example = ("whole", "500000") if whole else ("positive", "2.5")
            most = MAX_WHOLE_AMOUNT if whole else MAX_AMOUNT
            raise BadInputError(
                f"the note of choice {choice!r} of decision {question.get('id')!r} must be a "
                f"{kind} amount of at most {most:,} (e.g. '{example}' or '{choice}: {example}'), "
                f"not {text!r}"
            )
        text = amount_text
    return Answer(choice, text)


#: The longest note an answer may have (characters), from ``phasegate answer`` and the
#: dashboard alike: a longer one is refused (exit 2, 400 on the dashboard), nothing recorded.
MAX_NOTE_CHARS = 20_000


def check_note_length(item: str, decision: str, raw: str, note: str) -> None:
    """Refuse a note (``--note``, or after ``CHOICE:``) over :data:`MAX_NOTE_CHARS`."""
    for text in (note, split_choice(raw)[1]):
        if len(text) > MAX_NOTE_CHARS:
            raise BadInputError(
                f"the note to decision {decision!r} of {item!r} has {len(text):,} characters: "
                f"a note may have at most {MAX_NOTE_CHARS:,}; shorten it; nothing changed"
            )


#: What a suggested answer command holds where the chosen choice needs a note.
NOTE_PLACEHOLDER = "NOTE"


def answer_command(
    item: str,
    decision: str,
    choices: Sequence[str],
    recommendation: str | None = None,
    notes_required: Sequence[str] = (),
) -> str:
    """The command that answers ``decision`` (the recommended choice, else the first); a
    choice that needs a note is given one to fill in (``'yes: NOTE'``), so the command, as
    shown, is not refused for lack of one."""
    example = recommendation if recommendation in choices else (choices[0] if choices else None)
    if example is not None and example in notes_required:
        return f"phasegate answer {item} {decision} '{example}: {NOTE_PLACEHOLDER}'"
    return f"phasegate answer {item} {decision} {example or 'CHOICE'}"


def record_command(item: str, record: Mapping[str, Any]) -> str:
    """The answer command of a decision record (as the state holds it)."""
    choices = list(record.get("choices") or {})
    recommendation = record.get("recommendation")
    needs = [str(n) for n in (record.get("notes_required") or [])]
    return answer_command(item, str(record["id"]), choices, recommendation, needs)


#: The engine's transition warning (``run --phase P`` past unfinished phases), and the
#: mark a run leaves on a decision's record once it acted on the answer.
TRANSITION_WARNING = "transition-warning"
ACTED = "acted"


def answered_warning_command(item: str, decisions: Mapping[str, Any]) -> str | None:
    """``phasegate run ITEM --phase P`` while a transition warning's answer (given with
    ``phasegate answer``) waits for the run that asked it: a plain run would not take it."""
    record = decisions.get(TRANSITION_WARNING)
    if (
        isinstance(record, Mapping)
        and record.get("status") == "answered"
        and not record.get(ACTED)
        and record.get("context")
        and (record.get("answer") or {}).get("choice") == "proceed"
    ):
        return f"phasegate run {item} --phase {record['context']}"
    return None


def classified(item: WorkItem, state: EngineState, record: Mapping[str, Any], raw: str) -> str:
    """``raw`` as the gate's ``classify`` predicate reads it (``raw`` when it has none)."""
    from phasegate.engine.plugin_api import PluginContext, plugin
    from phasegate.engine.walk import definition_path

    context = str(record.get("context") or "")
    try:
        node = item.workflow.node(definition_path(context)) if context else None
    except KeyError:
        return raw
    name = getattr(node, "classify", None)
    if not name:
        return raw
    ctx = PluginContext(item, state, context, node, None, {"answer": raw})
    found = plugin("predicates", name)(ctx)
    return str(found) if found else raw


def apply_answer(state: EngineState, decision: str, answer: Answer) -> None:
    record = state.decisions[decision]
    record["status"] = "answered"
    record["answer"] = {
        "choice": answer.choice,
        "note": answer.note,
        "by": answer.by,
        "answered_at": utc_now(),
    }


def with_journaled_answers(item: WorkItem, state: EngineState) -> EngineState:
    """``state`` (changed in memory only) with the answers journaled after its last commit
    applied: ``phasegate answer`` or the dashboard answered a decision while a run was
    asking it, and the run has not applied the answer yet (or was killed before it did).
    ``decisions`` and ``status`` read a decision so answered as answered, never pending.
    A journal that cannot be read leaves ``state`` as committed (the run says why)."""
    from phasegate.errors import PhasegateError

    waiting = [d for d in state.decisions.values() if d.get("status") == "pending"]
    if not waiting:
        return state
    found: dict[tuple[str, int], Mapping[str, Any]] = {}
    try:
        for _, _, event in item.journal.tail(state.journal_offset, state.journal_lines + 1):
            if event.get("event") == "decision.answered" and isinstance(event.get("visit"), int):
                found.setdefault((str(event.get("id")), event["visit"]), event)
    except PhasegateError:
        return state
    for record in waiting:
        given = found.get((str(record.get("id")), int(record.get("visit", 0))))
        if given is not None and given.get("choice") in (record.get("choices") or {}):
            record["status"] = "answered"
            record["answer"] = {
                "choice": given["choice"],
                "note": str(given.get("note") or ""),
                "by": str(given.get("by") or "command"),
                "answered_at": given.get("ts"),
            }
    return state


def pending(state: EngineState) -> list[dict[str, Any]]:
    """The decisions waiting for an answer."""
    return [dict(d) for d in state.decisions.values() if d.get("status") == "pending"]


def answer_decision(
    item: WorkItem,
    decision: str,
    raw: str,
    note: str = "",
    by: AnsweredBy = "command",
    visit: int | None = None,
) -> dict[str, Any]:
    """Answer a pending decision of ``item`` (``phasegate answer``, the dashboard).

    Refuses an unknown decision, a choice that is not canonical and a decision
    already answered (exit 2), changing nothing. ``visit``: the question the answer
    was given to (the dashboard's form says which): a decision asked again since (the
    next ``budget`` question) is not answered by it. The answer is journaled under
    the item's lock; when no run holds the item it is also committed to the
    state, so ``status`` shows it at once. A note over :data:`MAX_NOTE_CHARS` is
    refused (exit 2) before anything is read or recorded.
    """
    check_note_length(item.name, decision, raw, note)
    with item.locked():
        state = item.load()
        record = state.decisions.get(decision)
        if record is None:
            _refuse_withdrawn(item, decision, visit)
            open_ids = [d["id"] for d in pending(with_journaled_answers(item, state))]
            known = ", ".join(open_ids) if open_ids else "none"
            raise BadInputError(
                f"{item.name} has no decision {decision!r} (pending: {known})"
                + _not_asked_yet(item, decision)
            )
        current = int(record.get("visit", 0))
        if visit is not None and visit != current:
            _refuse_other_visit(item, decision, visit, current)
        visit = current
        journaled = item.recorded().answer(decision, visit)
        if record.get("status") == "answered" or journaled is not None:
            earlier = (record.get("answer") or {}) if journaled is None else journaled
            raise AlreadyAnsweredError(
                f"decision {decision} of {item.name} was already answered: "
                f"{earlier.get('choice')!r} by {earlier.get('by', 'someone')}; nothing changed"
                + _asked_again(item, state, decision, journaled)
            )
        where = "dashboard" if by == "dashboard" else "answer"  # its advice on a missing note
        given = canonical(record, classified(item, state, record, raw), note, given_as=where)
        item.record(
            "decision.answered",
            id=decision,
            visit=visit,
            choice=given.choice,
            note=given.note,
            by=by,
            sync_now=True,
        )
        if not item.running():
            apply_answer(state, decision, Answer(given.choice, given.note, by))
            try:
                item.save(state, durable=True)
            except StorageError as exc:  # answering again would be refused: it is journaled
                raise exc.advising(
                    f"the answer {given.choice!r} to {decision} is recorded (in the journal): "
                    f"fix this, then go on with {_next_after(item, decision, record, given.choice)}"
                ) from exc
        return {
            "id": decision,
            "item": item.name,
            "choice": given.choice,
            "note": given.note,
            "by": by,
            # What takes the answer: the command that asked (run --phase P for a warning).
            "next": _next_after(item, decision, record, given.choice),
        }


def _not_asked_yet(item: WorkItem, decision: str) -> str:
    """What answers ``decision``, a gate of the item's workflow not asked yet (a run has not
    reached it): the run that asks it, given the answer with ``--answer``. A templated id
    (``ask-{{ task }}``) is more likely a key mistyped: the pending ones say which."""
    from phasegate.workflow.model import GateNode

    if item.journal.find("decision", id=decision) is not None:
        return ""  # answered by its default, never pending
    for path, node in item.workflow.walk():
        if isinstance(node, GateNode) and node.decision_template("/" in path) == decision:
            return (
                f"; a run has not asked it yet: give the answer to the run that asks it, "
                f"--answer {decision}=CHOICE"
            )
    return ""


def _asked_again(
    item: WorkItem, state: EngineState, decision: str, journaled: Mapping[str, Any] | None
) -> str:
    """What a refused answer to a ``budget`` question a run stopped at (``stop``, acted on)
    may do instead: the next run asks again, and ``--answer budget=raise`` raises it there."""
    from phasegate.engine.budget import BUDGET_DECISION, budget_record
    from phasegate.engine.status import again_command, current_label

    record = state.decisions.get(decision) or {}
    answer = (record.get("answer") or {}) if journaled is None else journaled
    visit = int(record.get("visit", 0))
    if decision != BUDGET_DECISION or answer.get("choice") != "stop":
        return ""
    if int(budget_record(state).get("acted", 0)) < visit:
        return ""  # the stop waits for the next run, which stops
    again = again_command(item.workflow, item.name, current_label(item.workflow, state))
    if again.startswith(("phasegate run ", "phasegate implement ")) and "(" not in again:
        again += " --answer budget=raise"
    return f"; a run stopped on it, and the next one asks again: {again}"


def _refuse_withdrawn(item: WorkItem, decision: str, visit: int | None) -> None:
    """An answer to ``decision`` (question ``visit``, if named), no longer pending because a
    run withdrew it (``decision.withdrawn``: the run went on without it): refused as an
    answer that came too late, as one to a question answered since is."""
    withdrawn = item.journal.find("decision.withdrawn", id=decision)
    if withdrawn is None:
        return
    asked = withdrawn.get("visit")
    if visit is not None and isinstance(asked, int) and visit > asked:
        return  # a question never asked: the error says which are pending
    reason = f" ({withdrawn['reason']})" if withdrawn.get("reason") else ""
    raise AlreadyAnsweredError(
        f"this answer to decision {decision} of {item.name} came too late: the decision no "
        f"longer waits, a run withdrew it{reason}; nothing changed"
    )


def _refuse_other_visit(item: WorkItem, decision: str, visit: int, current: int) -> None:
    """An answer given to question ``visit`` of ``decision`` while ``current`` is its latest."""
    if visit > current:
        raise BadInputError(
            f"question {visit} of decision {decision} of {item.name} was never asked (the "
            f"latest is question {current}); nothing changed"
        )
    raise AlreadyAnsweredError(
        f"this answer to decision {decision} of {item.name} came too late: the question it "
        f"answers (question {visit}) was already answered and decision {decision} was asked "
        f"again since (question {current}); read it again before answering; nothing changed"
    )


def _next_after(item: WorkItem, decision: str, record: Mapping[str, Any], choice: str) -> str:
    """The command that acts on ``decision``'s answer (just given): for a workflow with
    its own commands (``plan``, ``impl``...), the one that runs where the item stands;
    otherwise the command its label names (``phasegate implement ITEM``), as status does."""
    answered = {decision: {**record, "status": "answered", "answer": {"choice": choice}}}
    warning = answered_warning_command(item.name, answered)
    if warning is not None:
        return warning
    workflow = item.workflow
    from phasegate.engine.status import continue_command, current_label, next_for_label
    from phasegate.engine.walk import definition_path
    from phasegate.suggested_commands import workflow_command

    # A declined transition warning: the phases go on in order from where the item is.
    declined = decision == TRANSITION_WARNING and choice != "proceed"
    context = "" if declined else str(record.get("context") or "")
    label: str | None = None
    try:
        label = workflow.label_of(definition_path(context)) if context else None
    except KeyError:
        label = None
    state = item.load(read_journal=False)
    label = label or current_label(workflow, state)
    for name, command in workflow.commands.items():
        if label in command.runs_in:
            return workflow_command(workflow.name, name, item.name)
    suggested = next_for_label(workflow, state, label)
    if workflow.commands:
        return suggested
    # As status names it (`phasegate implement 006` for an implement item), unless the
    # label's advice is to answer, which is done, or is not a command at all.
    if suggested.startswith("phasegate ") and suggested.split()[1] not in ("decisions", "answer"):
        return suggested
    return continue_command(workflow, item.name, label)
