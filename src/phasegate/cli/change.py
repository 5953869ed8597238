"""``phasegate plan / impl / archive / mcp`` and the ``phasegate change`` group (seed 002)."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from phasegate.cli.app import JsonOption, RepoOption, _repo, app, err, out
from phasegate.cli.output import warn, write_json
from phasegate.cli.running import TerminalAsker
from phasegate.errors import BadInputError, BlockedError, StateCorruptError, WaitingForHuman

if TYPE_CHECKING:  # imported where used: --help starts without the change workflow
    from phasegate.change.api import Changes, ImplOutcome
    from phasegate.cli.workflow_progress import ChangeProgress

change_app = typer.Typer(
    name="change",
    help="The change workflow (changes/ID/): plan, impl, archive a change; status and list.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(change_app, name="change")

ChangeId = Annotated[str, typer.Argument(help="The change id (a folder under changes/).")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")]


def _open(repo: Path | None, quiet: bool) -> "tuple[Changes, ChangeProgress]":
    from phasegate.change.api import Changes
    from phasegate.cli.workflow_progress import ChangeProgress
    from phasegate.config import load_config

    root = _repo(repo)
    return Changes(root, load_config(root)), ChangeProgress(err, quiet=quiet)


def _print_findings(console: Console, outcome: "ImplOutcome") -> None:
    if outcome.review is None:
        return
    console.print(f"Review ({outcome.review.verdict.value}): {escape(outcome.review.summary)}")
    for finding in outcome.review.findings:
        console.print(f"  - {escape(finding.render())}")


def plan(
    change_id: ChangeId,
    description: Annotated[
        str | None, typer.Argument(help="What the change is about (needed to create it).")
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option("--mode", "-m", help="quick | standard | full: sets the iteration limits."),
    ] = None,
    rechallenge: Annotated[
        bool,
        typer.Option("--rechallenge", help="After editing the plan by hand: challenge it again."),
    ] = False,
    on_limit: Annotated[
        str | None,
        typer.Option(
            "--on-limit",
            help="At the planning iteration limit: implement (only with minor issues left) "
            "or continue revising. Without it and without a terminal, plan exits 3. "
            "A limit already answered with phasegate answer needs no --on-limit.",
        ),
    ] = None,
    then_implement: Annotated[
        bool, typer.Option("--implement", help="Once challenged, run impl right away.")
    ] = False,
    quiet: QuietOption = False,
    repo: RepoOption = None,
) -> None:
    """Plan a change: proposal.md -> specs/*.md -> tasks.md -> challenge loop.

    Creates the change when it does not exist, or only in the archive (give
    DESCRIPTION); otherwise continues from its phase. Running again after an interruption resumes.
    """
    from phasegate.change.api import LIMIT_CHOICES, PlanOptions
    from phasegate.engine.walk import NoTerminal
    from phasegate.notify import notifying

    if on_limit is not None and on_limit not in LIMIT_CHOICES:
        raise BadInputError(f"--on-limit must be one of {', '.join(LIMIT_CHOICES)}")
    changes, printer = _open(repo, quiet)
    interactive = sys.stdin.isatty()
    options = PlanOptions(
        description=description,
        mode=mode,
        rechallenge=rechallenge,
        on_limit=on_limit,
        viewer=lambda text: err.print(text, markup=False),
    )
    with notifying(
        changes.root, changes.config, item=change_id, workflow="change", command="plan", warn=warn
    ) as end:
        try:
            outcome = changes.plan(
                change_id,
                backends=None,
                asker=TerminalAsker(on_waiting=end.waiting)
                if interactive
                else NoTerminal(end.waiting),
                options=options,
                sink=printer,
            )
        finally:
            printer.close()
        if outcome.action == "rejected":
            raise BlockedError(outcome.message)
        if outcome.action == "waiting":
            raise WaitingForHuman(outcome.message)
        end.message = outcome.message
        # Planned (or planned before): the change goes on with impl and archive, so it is
        # not completed; like any run that stops before its item ends, nothing to announce.
        end.announce = False
    out.print(escape(outcome.message))
    if outcome.action not in ("challenged", "already-planned"):
        return
    paths = changes.paths(change_id)
    if not then_implement and interactive:
        asker = TerminalAsker(later=f"phasegate impl {change_id}")
        choice = asker.choose(
            "Implement now, or view the plan?", ["implement", "view", "stop"], "stop"
        )
        if choice == "view":
            for path in [paths.proposal_path, paths.tasks_path]:
                err.print(f"--- {paths.rel(path)}", markup=False)
                err.print(path.read_text(encoding="utf-8", errors="replace"), markup=False)
            choice = asker.choose("Implement now?", ["implement", "stop"], "stop")
        then_implement = choice == "implement"
    if then_implement:
        impl(change_id, review_only=False, quiet=quiet, repo=repo)


def impl(
    change_id: ChangeId,
    review_only: Annotated[
        bool,
        typer.Option(
            "--review-only",
            help="After a stop for a manual fix: skip implementing, review again "
            "(refused before anything was implemented).",
        ),
    ] = False,
    quiet: QuietOption = False,
    repo: RepoOption = None,
) -> None:
    """Implement a challenged change: tasks.md group by group, review (create_review), fix loop."""
    from phasegate.change.api import ImplOptions
    from phasegate.engine.walk import NoTerminal
    from phasegate.notify import notifying

    changes, printer = _open(repo, quiet)
    with notifying(
        changes.root, changes.config, item=change_id, workflow="change", command="impl", warn=warn
    ) as end:
        try:
            outcome = changes.impl(
                change_id,
                options=ImplOptions(review_only=review_only),
                sink=printer,
                asker=TerminalAsker(on_waiting=end.waiting)
                if sys.stdin.isatty()
                else NoTerminal(end.waiting),
            )
        finally:
            printer.close()
        if outcome.status == "stopped":
            _print_findings(err, outcome)
            raise BlockedError(outcome.message)
        end.message = outcome.message
        # Complete is not the change's end (archive is): nothing to announce yet.
        end.announce = False
    out.print(escape(outcome.message))


def archive(
    change_id: ChangeId,
    resolved: Annotated[
        bool,
        typer.Option(
            "--resolved",
            help="You merged the conflicting requirements archive reported into the "
            "change's specs by hand: take the change's version of them.",
        ),
    ] = False,
    quiet: QuietOption = False,
    repo: RepoOption = None,
) -> None:
    """Archive a complete change: merge its specs into the living specs, move it to the archive."""
    from phasegate.notify import notifying

    changes, printer = _open(repo, quiet)
    with notifying(
        changes.root,
        changes.config,
        item=change_id,
        workflow="change",
        command="archive",
        warn=warn,
    ) as end:
        try:
            outcome = changes.archive(change_id, resolved=resolved, sink=printer)
        finally:
            printer.close()
        # The change ends here: archiving it completes it (an archived one, nothing to say).
        end.message = outcome.message
        end.announce = outcome.action == "archived"
    out.print(escape(outcome.message))


def status(
    change_id: Annotated[str | None, typer.Argument(help="A change (default: all).")] = None,
    as_json: JsonOption = False,
    repo: RepoOption = None,
) -> None:
    """Show a change's phase and what to run next (or list every change in progress)."""
    from phasegate.change.api import Changes, read_change_state
    from phasegate.change.paths import ARCHIVE_DIR, archived_folder
    from phasegate.change.phases import next_command
    from phasegate.config import load_config

    root = _repo(repo)
    changes = Changes(root, load_config(root))
    if change_id:
        ids = [change_id]
    else:
        root_dir = changes.changes_root
        ids = sorted(
            p.parent.name for p in root_dir.glob("*/STATE.yaml") if p.parent.name != ARCHIVE_DIR
        )
    rows: list[dict[str, Any]] = []
    for cid in ids:
        paths = changes.paths(cid)
        if not paths.state_path.is_file() and archived_folder(changes.changes_root, cid):
            rows.append({"change_id": cid, "phase": "archived", "next": None})
            continue
        try:
            state = read_change_state(paths.state_path)
        except StateCorruptError as exc:
            if change_id:  # the one change asked about: its own error (exit 5)
                raise
            # One unreadable STATE.yaml does not hide the other changes: it is named.
            rows.append(
                {
                    "change_id": cid,
                    "phase": "unreadable",
                    "next": None,
                    "state_file": paths.rel(paths.state_path),
                    "error": str(exc),
                }
            )
            continue
        rows.append(
            {
                "change_id": cid,
                "phase": state.phase.value,
                "description": state.description,
                "plan_step": state.plan.step if state.plan else None,
                "impl_step": state.impl.step if state.impl else None,
                "next": next_command(state.phase, cid, state),
                "state_file": paths.rel(paths.state_path),
                "agent_calls": state.usage.calls,
            }
        )
    if as_json:
        write_json(rows[0] if change_id else rows)
        return
    if not rows:
        start = 'Start one with: phasegate plan ID "what it is about"'
        archive = changes.changes_root / ARCHIVE_DIR
        archived = len(list(archive.glob("*/STATE.yaml"))) if archive.is_dir() else 0
        if archived:
            where = archive.relative_to(root) if archive.is_relative_to(root) else archive
            out.print(f"No change in progress ({archived} archived in {where}). {start}")
        else:
            out.print(f"No changes yet. {start}")
        return
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    for column in ("change", "phase", "next"):
        table.add_column(column)
    for row in rows:
        next_text = "(see below)" if "error" in row else row["next"] or ""
        table.add_row(row["change_id"], row["phase"], escape(next_text))
    out.print(table)
    for row in rows:
        if "error" in row:
            out.print(escape(row["error"]))


def mcp(
    change_id: Annotated[
        str | None,
        typer.Option(
            "--change",
            help="Serve only this change, which must exist (tool calls naming another fail).",
        ),
    ] = None,
    tools: Annotated[
        str | None,
        typer.Option("--tools", help="Comma-separated tools to offer (default: all)."),
    ] = None,
    repo: RepoOption = None,
) -> None:
    """Run phasegate's MCP server on stdio: create_review, get_change, get_tasks."""
    from phasegate.change.mcp_server import serve_stdio  # the SDK is slow to import: only here
    from phasegate.change.tools import TOOLS, ChangeTools
    from phasegate.config import load_config

    root = _repo(repo)
    allowed = [t.strip() for t in tools.split(",") if t.strip()] if tools is not None else None
    if allowed is not None and not allowed:
        raise BadInputError(f"--tools {tools!r} names no tool (tools: {', '.join(TOOLS)})")
    config = load_config(root)
    try:
        tools_ = ChangeTools(root, change_id=change_id, allowed=allowed, config=config)
    except BadInputError as exc:
        raise BadInputError(f"--tools {tools!r}: {exc}") from None
    if change_id is not None:
        # A server bound to a change it cannot serve would refuse every call: refuse it now.
        try:
            tools_.served_change()
        except BadInputError as exc:
            raise BadInputError(f"--change {change_id!r}: {exc}") from None
    serve_stdio(tools_)


# Top level (the seed's commands) and under `phasegate change`, the same functions.
app.command()(plan)
app.command()(impl)
app.command()(archive)
app.command()(mcp)
change_app.command()(plan)
change_app.command()(impl)
change_app.command()(archive)
change_app.command()(status)
change_app.command(
    "list",
    help="List every change in progress, its phase and what to run next (as 'change status').",
)(status)
