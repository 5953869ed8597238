"""Running a work item from the command line: progress, the terminal's answers, the
final status. Shared by ``run``, ``implement`` and the change workflow's commands."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.cli.output import err, warn
from phasegate.errors import BadInputError, BlockedError, ItemRunningError, WaitingForHuman

if TYPE_CHECKING:
    from phasegate.cli.progress import ProgressPrinter
    from phasegate.engine.item import WorkItem
    from phasegate.engine.runner import RunOptions, RunOutcome
    from phasegate.engine.state import EngineState
    from phasegate.workflow.model import GateNode, Workflow


class TerminalAsker:
    """Asks on the terminal (only used when stdin is a TTY).

    An empty answer (Enter) takes ``default``, which the prompt shows. Without a default
    (a gate with neither ``default`` nor ``recommend``, or an ``explicit`` one) an empty
    answer takes nothing: the prompt says so, names the choices and asks again. Ctrl-D
    (the end of the input) at a gate's prompt (:meth:`choose_watching`) raises
    ``EOFError``: nobody answers here, and the gate names the command that answers it.
    At :meth:`choose` and :meth:`confirm`, asked for no gate, it stops the command with
    exit 3 naming the question and ``later``, the command that does what it offers.
    """

    interactive = True

    #: How often a waiting prompt asks whether it may stop waiting (see choose_watching).
    poll_seconds = 0.5

    def __init__(
        self, later: str | None = None, on_waiting: Callable[[str], None] | None = None
    ) -> None:
        #: The command that does later what :meth:`choose` or :meth:`confirm` offers.
        self.later = later
        #: Told when a gate's question is about to be asked here (the ``waiting``
        #: notification), with how it can be answered.
        self.on_waiting = on_waiting

    def choose(self, question: str, choices: Sequence[str], default: str | None) -> str:
        from rich.markup import escape
        from rich.prompt import Prompt

        err.print(question, markup=False)
        prompt = escape(f"Answer ({' / '.join(choices)})")
        while True:
            try:
                if default:
                    answer = Prompt.ask(prompt, default=default, console=err) or ""
                else:
                    answer = Prompt.ask(prompt, console=err) or ""
            except EOFError:
                raise self._unanswered(question) from None
            if answer.strip() or default:
                return answer
            err.print(_no_default(choices), markup=False)

    def confirm(self, question: str, default: bool) -> bool:
        from rich.prompt import Confirm

        try:
            return Confirm.ask(question, default=default, console=err)
        except EOFError:
            raise self._unanswered(question) from None

    def _unanswered(self, question: str) -> WaitingForHuman:
        """Ctrl-D at ``question``: nobody answers here now (exit 3); what was recorded
        stays, and what the question offered is left undone."""
        err.print("", markup=False)  # the error that follows gets its own line
        asked = " ".join(question.split())
        later = f"; to do it later: {self.later}" if self.later else ""
        return WaitingForHuman(
            f'no answer to "{asked}" (the terminal\'s input ended): left undone{later}'
        )

    def show(self, text: str) -> None:
        """Show ``text`` to the person at the prompt (a gate's files, what happened)."""
        err.print(text, markup=False, highlight=False)

    def choose_within(
        self, question: str, choices: Sequence[str], default: str | None, seconds: float
    ) -> str | None:
        """Ask, waiting at most ``seconds`` for a line; ``None`` when none came in time."""
        return self.choose_watching(question, choices, default, seconds, None)

    def choose_watching(
        self,
        question: str,
        choices: Sequence[str],
        default: str | None,
        seconds: float | None,
        stop: Callable[[], bool] | None,
    ) -> str | None:
        """Ask, waiting for a line at most ``seconds`` (``None``: as long as it takes) and
        until ``stop()`` (asked every :attr:`poll_seconds`) says the answer came from
        elsewhere; ``None`` when either ended the wait."""
        import time

        from rich.text import Text

        err.print(question, markup=False)
        deadline = None if seconds is None else time.monotonic() + max(seconds, 0.0)
        while True:
            prompt = Text(f"Answer ({' / '.join(choices)})")
            if deadline is None:
                if default:
                    prompt.append(" ")
                    prompt.append(f"({default})", style="prompt.default")
                prompt.append(": ")
            else:
                left = max(deadline - time.monotonic(), 0.0)
                shown = f" [{default}]" if default else ""
                prompt.append(f"{shown}, within {left:.0f}s: ")
            err.print(prompt, end="")
            line = self._read_line(deadline, stop)
            if line is None:
                err.print("", markup=False)
                return None
            if line.strip() or default:
                return line.strip() or (default or "")
            err.print(_no_default(choices), markup=False)

    def _read_line(self, deadline: float | None, stop: Callable[[], bool] | None) -> str | None:
        """A line typed before ``deadline`` and before ``stop()``, else ``None``."""
        import select
        import time

        while True:
            wait = self.poll_seconds if stop is not None else None
            if deadline is not None:
                left = max(deadline - time.monotonic(), 0.0)
                wait = left if wait is None else min(wait, left)
            ready, _, _ = select.select([sys.stdin], [], [], wait)
            if ready:
                line = sys.stdin.readline()
                if not line:
                    err.print("", markup=False)  # the error that follows gets its own line
                    raise EOFError
                return line
            if stop is not None and stop():
                return None
            if deadline is not None and time.monotonic() >= deadline:
                return None


def _no_default(choices: Sequence[str]) -> str:
    return f"There is no default answer here: type one of {', '.join(choices)}."


def utf8_argument(value: str, what: str) -> str:
    """``value`` of a command-line argument, refused (exit 2) unless it is UTF-8 text.

    Python reads bytes that are not UTF-8 into lone surrogates, which nothing can store.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = exc.start
        byte = ord(value[where]) - 0xDC00 if "\udc80" <= value[where] <= "\udcff" else None
        what_byte = f"byte 0x{byte:02x}" if byte is not None else "a character"
        raise BadInputError(
            f"{what} is not valid UTF-8 text ({what_byte} at character {where + 1}); "
            "give it as UTF-8"
        ) from None
    return value


def parse_answers(values: list[str] | None) -> dict[str, str]:
    """``--answer ID=CHOICE`` options as a mapping (bad ones are refused)."""
    from phasegate.engine.answers import MAX_NOTE_CHARS, split_choice

    answers: dict[str, str] = {}
    for raw in values or []:
        utf8_argument(raw, "--answer")
        decision, sep, choice = raw.partition("=")
        if not sep or not decision.strip() or not choice.strip():
            raise BadInputError(f"--answer {raw!r}: write it as DECISION=CHOICE")
        decision, choice = decision.strip(), choice.strip()
        note = split_choice(choice)[1]
        if len(note) > MAX_NOTE_CHARS:
            raise BadInputError(
                f"--answer {decision}=...: the note has {len(note):,} characters: a note "
                f"may have at most {MAX_NOTE_CHARS:,}; shorten it"
            )
        earlier = answers.setdefault(decision, choice)
        if earlier != choice:
            raise BadInputError(
                f"--answer {decision}=...: given twice, as {earlier!r} and {choice!r}; "
                "give one answer to a decision"
            )
    return answers


#: The decisions phasegate itself may ask during any run (a budget cap, a warned
#: transition, a phase found half done).
OWN_DECISIONS = ("budget", "transition-warning", "partial-phase")
#: Their choices: a wrong one is refused before the run, not when it asks mid-way.
OWN_CHOICES = {
    "budget": ("raise", "stop"),
    "transition-warning": ("proceed", "stop"),
    "partial-phase": ("continue", "fresh", "review"),
}


def check_answer_ids(
    workflow: Workflow, answers: Mapping[str, str], item: WorkItem | None = None
) -> None:
    """Refuse (exit 2, before the run starts) an ``--answer`` whose decision id no run of
    ``workflow`` can ask: not a gate's ``decision`` (a templated one matches whatever its
    placeholders fill in), not one of :data:`OWN_DECISIONS`, not a parallel merge's
    ``conflict-KEY``; and one that is not a choice of its gate (read as the gate's
    ``classify`` reads it, with the note its choice requires)."""
    import re

    from phasegate.engine.answers import split_choice
    from phasegate.workflow.model import ForeachNode, GateNode
    from phasegate.workflow.prompts import PLACEHOLDER

    if not answers:
        return
    patterns: list[str] = [re.escape(own) for own in OWN_DECISIONS]
    named: list[str] = []
    gates: list[tuple[re.Pattern[str], str, GateNode]] = []
    for path, node in workflow.walk():
        if isinstance(node, GateNode):
            template = node.decision_template("/" in path)
            named.append(template)
            parts = PLACEHOLDER.split(template)  # literal, name, literal, name, ...
            pattern = ".*".join(re.escape(part) for part in parts[::2])
            patterns.append(pattern)
            gates.append((re.compile(pattern, re.DOTALL), path, node))
        elif isinstance(node, ForeachNode):
            patterns.append("conflict-.+")
    possible = re.compile("|".join(f"(?:{p})" for p in patterns), re.DOTALL)
    for decision in answers:
        if possible.fullmatch(decision) is None:
            raise BadInputError(
                f"--answer {decision}=...: workflow {workflow.name!r} has no decision "
                f"{decision!r} ({_answerable(item, named)})"
            )
    for decision, raw in answers.items():
        own = OWN_CHOICES.get(decision)
        if own is not None and split_choice(raw)[0] not in own:
            alike = [c for c in own if c.lower() == split_choice(raw)[0].lower()]
            raise BadInputError(
                f"--answer {decision}={raw}: {split_choice(raw)[0]!r} is not a choice of "
                f"decision {decision!r} (choices: {', '.join(own)})"
                + (f"; did you mean {alike[0]!r}?" if alike else "")
            )
        if decision == "budget":
            _check_raise_note(raw)
        matching = [(path, node) for found, path, node in gates if found.fullmatch(decision)]
        # A decision id written out in full names its gate before a templated one.
        matching.sort(key=lambda gate: gate[1].decision_template("/" in gate[0]) != decision)
        problems = [_choice_problem(item, decision, raw, path, node) for path, node in matching]
        if problems and all(problems):
            raise BadInputError(f"--answer {decision}={raw}: {problems[0]}")


def _check_raise_note(raw: str) -> None:
    """Refuse ``--answer budget=raise: NOTE`` whose note is no amount at all, before the run
    (its calls) rather than when the cap is reached; whether the cap takes a whole number
    (tokens) is known only then."""
    from phasegate.engine.answers import parse_amount, split_choice

    choice, note = split_choice(raw)
    if choice != "raise" or not note:
        return
    named, sep, rest = note.partition(":")
    amount = rest.strip() if sep and named.strip().lower() == "raise" else note
    if parse_amount(amount, whole=True) is None and parse_amount(amount) is None:
        raise BadInputError(
            f"--answer budget={raw}: the note of choice 'raise' must be a positive amount in "
            f"the cap's unit (e.g. 'budget=raise: 2.5' for USD, 'budget=raise: 500000' for "
            f"tokens), not {note!r}"
        )


def check_recorded_answers(
    item: WorkItem, answers: Mapping[str, str], *, plain: bool = True
) -> None:
    """Warn, before the run starts, of an ``--answer`` to a gate whose current question was
    already answered otherwise (``phasegate answer``, the dashboard, an earlier run's flag)
    and waits for the run to act on it: the first answer recorded wins, and the flag answers
    only the gate's next visit (a round that asks again), so it is not followed now. An
    item that has ended (a ``plain`` run: no command, no ``--phase``) runs nothing: said."""
    from phasegate.cli.output import warn
    from phasegate.engine.answers import classified, split_choice, with_journaled_answers
    from phasegate.engine.budget import BUDGET_DECISION
    from phasegate.errors import PhasegateError

    if not answers or not item.engine_path.exists():
        return
    try:
        state = with_journaled_answers(item, item.load(read_journal=False))
    except PhasegateError:
        return  # the run says why
    if plain and (state.status == "completed" or state.at == "@end"):
        given = " ".join(f"--answer {d}={raw}" for d, raw in answers.items())
        warn(
            f"{given}: {item.name} has already ended ({state.status}); nothing runs, "
            "so no gate asks"
        )
        return
    for decision, raw in answers.items():
        record = state.decisions.get(decision)
        if decision == BUDGET_DECISION:
            if isinstance(record, Mapping) and record.get("status") == "pending":
                _check_pending_budget_answer(item, state, record, raw)
            _check_recorded_budget_answer(item, state, raw)
            continue
        if decision in OWN_DECISIONS or not isinstance(record, Mapping):
            continue
        recorded = record.get("answer")
        context = str(record.get("context") or "")
        gate = state.peek(context) if context else None
        if (
            record.get("status") != "answered"
            or not isinstance(recorded, Mapping)
            or gate is None
            or not gate.get("started")
            or gate.get("outcome") is not None
            or (record.get("visit") is not None and record.get("visit") != gate.get("visit"))
        ):
            continue  # not answered, or answered at a visit a run already acted on
        try:
            choice, note = split_choice(classified(item, state, record, raw))
        except PhasegateError:
            continue
        if choice == recorded.get("choice") and note in ("", recorded.get("note") or ""):
            continue
        said = str(recorded.get("choice"))
        if recorded.get("note"):
            said += f": {recorded['note']}"
        warn(
            f"--answer {decision}={raw}: decision {decision} of {item.name} was already "
            f"answered {said!r} (by {recorded.get('by') or 'someone'}); the run acts on that "
            f"answer (the first recorded), and this flag answers only the gate's next visit, "
            f"if the run comes back to it"
        )


def _check_pending_budget_answer(
    item: WorkItem, state: EngineState, record: Mapping[str, Any], raw: str
) -> None:
    """Refuse, before the run, an ``--answer budget=...`` the question waiting would refuse
    (a raise in the wrong unit: ``0.5`` for a token cap): refused in the run, it would
    leave the item shown blocked until the next run."""
    from phasegate.engine.answers import canonical, classified

    try:
        canonical(record, classified(item, state, record, raw), given_as="--answer")
    except BadInputError as exc:
        raise BadInputError(f"--answer budget={raw}: {exc}") from None


def _check_recorded_budget_answer(item: WorkItem, state: EngineState, raw: str) -> None:
    """:func:`check_recorded_answers` for the budget cap's question: an answer recorded and
    not acted on yet is what the run follows, a ``stop`` included."""
    from phasegate.engine.answers import split_choice
    from phasegate.engine.budget import BUDGET_DECISION, unacted_answer

    found = unacted_answer(state)
    if found is None:
        return
    choice, note, _ = found
    given, given_note = split_choice(raw)
    if given == choice and given_note in ("", note):
        return
    decision = state.decisions.get(BUDGET_DECISION) or {}
    answer = decision.get("answer") or {}
    said = f"{choice}: {note}" if note else choice
    acts = "stops at the cap" if choice == "stop" else "raises the cap as answered"
    warn(
        f"--answer {BUDGET_DECISION}={raw}: decision {BUDGET_DECISION} of {item.name} was "
        f"already answered {said!r} (by {answer.get('by') or 'someone'}); the run acts on "
        f"that answer (the first recorded) and {acts}, and this flag answers the question "
        "only when a later run asks it again"
    )


def _answerable(item: WorkItem | None, templates: list[str]) -> str:
    """The decision ids a person can give ``--answer``: those ``item`` waits on now, then
    the workflow's others, a templated one with its placeholders as ``<name>``."""
    from phasegate.engine.answers import pending, with_journaled_answers
    from phasegate.errors import PhasegateError
    from phasegate.workflow.prompts import PLACEHOLDER

    waiting: list[str] = []
    if item is not None and item.engine_path.exists():
        try:
            state = with_journaled_answers(item, item.load(read_journal=False))
            waiting = [str(record["id"]) for record in pending(state)]
        except PhasegateError:
            waiting = []
    others = [PLACEHOLDER.sub(lambda m: f"<{m.group(1)}>", name) for name in templates]
    known = ", ".join(d for d in dict.fromkeys([*others, *OWN_DECISIONS]) if d not in waiting)
    if waiting:
        return f"waiting: {', '.join(waiting)}; its other decisions: {known}"
    return f"its decisions: {known}"


def _choice_problem(
    item: WorkItem | None, decision: str, raw: str, path: str, node: GateNode
) -> str | None:
    """Why ``raw`` does not answer gate ``node`` (``None`` when it does)."""
    from phasegate.engine.answers import canonical

    answer = raw
    if node.classify and item is not None:
        from phasegate.engine.plugin_api import PluginContext, plugin

        state = item.load(read_journal=False)
        found = plugin("predicates", node.classify)(
            PluginContext(item, state, path, node, None, {"answer": raw})
        )
        answer = str(found) if found else raw
    record = {
        "id": decision,
        "choices": dict(node.choices),
        "notes_required": [n for n, c in node.choices.items() if c.note == "required"],
    }
    try:
        canonical(record, answer, given_as="--answer")
    except BadInputError as exc:
        return str(exc)
    return None


def _ended_before(item: WorkItem) -> bool:
    """Whether ``item`` had already ended (completed, dropped, blocked at an end) before
    this run: the run then does nothing. A state that cannot be read says no (the run
    says why)."""
    from phasegate.errors import PhasegateError

    if not item.engine_path.exists():
        return False
    try:
        state = item.load(read_journal=False)
    except PhasegateError:
        return False
    return state.status == "completed" or state.at == "@end"


def _busy_waiting(item: WorkItem, busy: ItemRunningError) -> ItemRunningError:
    """``busy`` (another run holds ``item``), saying what answers it when that run waits
    for a person: it finishes only once its decision is answered."""
    from phasegate.engine.answers import pending, record_command, with_journaled_answers
    from phasegate.errors import PhasegateError

    try:
        waiting = pending(with_journaled_answers(item, item.load(read_journal=False)))
    except PhasegateError:
        return busy
    if not waiting:
        return busy
    record = waiting[0]
    more = f" (and {len(waiting) - 1} more: phasegate decisions {item.name})" if waiting[1:] else ""
    return ItemRunningError(
        f"{busy}; it waits for decision {record['id']}{more}: answer it with "
        f"{record_command(item.name, record)}"
    )


def _warn_unasked(item: WorkItem, answers: Mapping[str, str]) -> None:
    """Warn of each ``--answer`` to a gate's decision that the item never asked (a run
    that stopped before the gate, a task key mistyped): it answered nothing, and the run
    that reaches the gate needs it again. phasegate's own decisions are answered just in
    case (a cap that may be reached): not warned of."""
    from phasegate.errors import PhasegateError

    if not answers:
        return
    try:
        asked = item.load(read_journal=False).decisions
    except PhasegateError:
        return  # the run says why
    for decision, raw in answers.items():
        if decision not in asked and decision not in OWN_DECISIONS:
            warn(
                f"--answer {decision}={raw} answered nothing: {item.name} has not asked "
                f"decision {decision!r}; give it again to the run that asks it"
            )


def run_item(
    root: Path,
    name: str,
    options: RunOptions,
    *,
    workflow: str | None = None,
    quiet: bool = False,
    show_status: bool = True,
    progress: type[ProgressPrinter] | None = None,
    command: str | None = None,
) -> RunOutcome:
    """Run (or resume) ``name`` with progress on stderr; the CLI commands share this.

    ``command`` is the phasegate command a notification names (default: the workflow
    command of ``options``, else ``run``).
    """
    from dataclasses import replace

    from phasegate.cli.progress import ProgressPrinter
    from phasegate.cli.views import print_item_status
    from phasegate.config import load_config
    from phasegate.engine.calls import Backends
    from phasegate.engine.item_status import status_of
    from phasegate.engine.items import locate_item
    from phasegate.engine.runner import NoTerminal, Runner
    from phasegate.notify import notifying
    from phasegate.suggested_commands import (
        errors_with_workflow,
        named_elsewhere,
        status_with_workflow,
        with_workflow,
    )
    from phasegate.workflow.registry import WorkflowRegistry

    config = load_config(root)
    registry = WorkflowRegistry(root)
    item = locate_item(root, name, registry, config, workflow, command=options.command)
    check_answer_ids(item.workflow, options.answers, item)
    check_recorded_answers(
        item, options.answers, plain=options.command is None and options.phase is None
    )
    # Without a workflow given the item was found by its name alone: no other workflow has it.
    shared = workflow is not None and named_elsewhere(
        root, name, item.workflow.name, registry, config
    )
    printer = (progress or ProgressPrinter)(err, quiet=quiet)
    if shared:
        printer.commands = lambda text: with_workflow(text, name, item.workflow.name)
    item.sink = printer
    # The run's one yes/no question: remove a finished item's worktree.
    later = f"phasegate worktree remove {name}"
    asker = TerminalAsker(later) if sys.stdin.isatty() else NoTerminal()
    ended = _ended_before(item)
    with (
        notifying(
            root,
            config,
            item=name,
            workflow=item.workflow.name,
            command=command or options.command or "run",
            warn=warn,
        ) as end,
        errors_with_workflow(name, item.workflow.name, shared),
    ):
        try:
            # An item that had already ended is not run again: nothing to announce.
            end.announce = not ended
            asker.on_waiting = end.waiting
            try:
                outcome = Runner(item, Backends(config, root), asker, options).run()
            except ItemRunningError as exc:
                raise _busy_waiting(item, exc) from None
            except (WaitingForHuman, BlockedError):
                if not ended:  # a run that went as far as a person or a block
                    printer.close()  # its progress first
                    _warn_unasked(item, options.answers)
                raise
            if not ended:
                printer.close()
                _warn_unasked(item, options.answers)
            if shared:
                named = with_workflow(outcome.message, name, item.workflow.name)
                outcome = replace(outcome, message=named)
            end.message = outcome.message
            end.stopped = outcome.state.status == "stopped"
            # A run that stopped before its item ended (--until, --phase, a command's
            # stop) did not complete it: nothing to announce.
            if outcome.state.status not in ("completed", "stopped"):
                end.announce = False
        finally:
            printer.close()
    if show_status and not quiet:
        # Re-read from disk: the recorded state is the redacted one.
        status = status_of(item, item.load(read_journal=False))
        print_item_status(err, status_with_workflow(status) if shared else status)
    return outcome
