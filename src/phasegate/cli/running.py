"""Running a work item from the command line: progress, the terminal's answers, the
final status. Shared by ``run``, ``implement`` and the change workflow's commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from phasegate.cli.output import err, warn
from phasegate.errors import BadInputError

if TYPE_CHECKING:
    from phasegate.cli.progress import ProgressPrinter
    from phasegate.engine.runner import RunOptions, RunOutcome


class TerminalAsker:
    """Asks on the terminal (only used when stdin is a TTY)."""

    interactive = True

    def choose(self, question: str, choices: Sequence[str], default: str | None) -> str:
        from rich.prompt import Prompt

        err.print(question, markup=False)
        prompt = f"Answer ({' / '.join(choices)})"
        return Prompt.ask(prompt, default=default, console=err) or ""

    def confirm(self, question: str, default: bool) -> bool:
        from rich.prompt import Confirm

        return Confirm.ask(question, default=default, console=err)

    def choose_within(
        self, question: str, choices: Sequence[str], default: str | None, seconds: float
    ) -> str | None:
        """Ask, waiting at most ``seconds`` for a line; ``None`` when none came in time."""
        import select

        err.print(question, markup=False)
        shown = f" [{default}]" if default else ""
        err.print(
            f"Answer ({' / '.join(choices)}){shown}, within {max(seconds, 0):.0f}s: ",
            end="",
            markup=False,
        )
        ready, _, _ = select.select([sys.stdin], [], [], max(seconds, 0.0))
        if not ready:
            err.print("", markup=False)
            return None
        line = sys.stdin.readline()
        if not line:
            return None
        return line.strip() or (default or "")


def parse_answers(values: list[str] | None) -> dict[str, str]:
    """``--answer ID=CHOICE`` options as a mapping (bad ones are refused)."""
    answers: dict[str, str] = {}
    for raw in values or []:
        decision, sep, choice = raw.partition("=")
        if not sep or not decision.strip() or not choice.strip():
            raise BadInputError(f"--answer {raw!r}: write it as DECISION=CHOICE")
        answers[decision.strip()] = choice.strip()
    return answers


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
    # Without a workflow given the item was found by its name alone: no other workflow has it.
    shared = workflow is not None and named_elsewhere(
        root, name, item.workflow.name, registry, config
    )
    printer = (progress or ProgressPrinter)(err, quiet=quiet)
    if shared:
        printer.commands = lambda text: with_workflow(text, name, item.workflow.name)
    item.sink = printer
    asker = TerminalAsker() if sys.stdin.isatty() else NoTerminal()
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
            outcome = Runner(item, Backends(config, root), asker, options).run()
            if shared:
                named = with_workflow(outcome.message, name, item.workflow.name)
                outcome = replace(outcome, message=named)
            end.message = outcome.message
        finally:
            printer.close()
    if show_status and not quiet:
        # Re-read from disk: the recorded state is the redacted one.
        status = status_of(item, item.load(read_journal=False))
        print_item_status(err, status_with_workflow(status) if shared else status)
    return outcome
