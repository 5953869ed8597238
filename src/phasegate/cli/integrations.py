"""Commands for working from inside Claude Code: hook, install, uninstall, worktree."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from phasegate.cli.app import RepoOption, _repo, app, out
from phasegate.cli.output import warn
from phasegate.errors import BadInputError

if TYPE_CHECKING:
    from phasegate.integrations.claude_code.settings import Report
from phasegate.integrations.claude_code import EVENTS

TARGETS = ("claude-code",)
#: The workflow whose phases get slash commands.
COMMANDS_WORKFLOW = "feature"


def _target(target: str) -> None:
    if target not in TARGETS:
        raise BadInputError(f"unknown integration {target!r} (available: {', '.join(TARGETS)})")


def _mcp_available() -> bool:
    """Whether this phasegate has an ``mcp`` command (checked when installing)."""
    from phasegate.cli.commands import command_name, load_all

    everything = load_all()  # a command's own module alone may be loaded
    names = {command_name(c) for c in everything.registered_commands}
    names |= {command_name(g) for g in everything.registered_groups}
    return "mcp" in names


def _print(report: "Report", repo: Path, nothing: str) -> None:
    changed = [(p, a) for p, a in report.changes if a != "unchanged"]
    for path, action in changed:
        shown = path.relative_to(repo) if path.is_relative_to(repo) else path
        out.print(f"{action}: {shown}", markup=False)
    for note in report.notes:
        out.print(f"note: {note}", markup=False)
    if not changed:
        out.print(nothing, markup=False)


@app.command()
def hook(
    event: Annotated[str, typer.Argument(help=f"The hook event: {' | '.join(EVENTS)}.")],
) -> None:
    """Answer a Claude Code hook (JSON on stdin, JSON on stdout); never fails the session."""
    from phasegate.integrations.claude_code.hook import run_hook

    if event not in EVENTS:
        raise BadInputError(f"unknown hook event {event!r} (available: {', '.join(EVENTS)})")
    run_hook(event, sys.stdin, sys.stdout)


@app.command(name="install")
def install_command(
    target: Annotated[str, typer.Argument(help="What to install into: claude-code.")],
    guard: Annotated[
        bool,
        typer.Option(
            "--guard/--no-guard",
            help="Also install the PreToolUse hook that denies hand edits of state files.",
        ),
    ] = True,
    command: Annotated[
        str | None,
        typer.Option(
            "--command",
            help="How hooks and slash commands call phasegate (default: 'phasegate' if it is "
            "on PATH, else this installation's absolute path).",
        ),
    ] = None,
    repo: RepoOption = None,
) -> None:
    """Add phasegate's hooks and slash commands to .claude/, its MCP server to .mcp.json.

    Merges with what is there, never overwrites a user's own entries, and
    changes nothing when run again.
    """
    from phasegate.integrations.claude_code.install import default_command, install
    from phasegate.integrations.claude_code.layout import load_layout
    from phasegate.workflow.model import ActionNode, AgentNode
    from phasegate.workflow.registry import WorkflowRegistry

    _target(target)
    root = _repo(repo)
    if command is not None and "phasegate" not in command:
        # Install and uninstall recognise their own entries by it.
        raise BadInputError(f"--command {command!r} must run phasegate (name it in the command)")
    workflow = WorkflowRegistry(root).get(COMMANDS_WORKFLOW).workflow
    # Every phase `run --phase` runs: the agents' and finish (an action), as in seed 000.
    runnable = (AgentNode, ActionNode)
    phases = [(n.id, n.description) for n in workflow.nodes if isinstance(n, runnable)]
    cmd = command or default_command()
    report = install(root, cmd, phases, guard=guard, mcp=_mcp_available())
    load_layout(root)  # so the first session does not pay for building it
    _print(report, root, "Already installed; nothing changed.")
    if report.changed:
        out.print(f"Hooks and slash commands call: {cmd}", markup=False)


@app.command(name="uninstall")
def uninstall_command(
    target: Annotated[str, typer.Argument(help="What to remove phasegate from: claude-code.")],
    repo: RepoOption = None,
) -> None:
    """Remove exactly what 'phasegate install' added; the user's own entries stay as they are."""
    from phasegate.integrations.claude_code.install import uninstall

    _target(target)
    root = _repo(repo)
    _print(uninstall(root), root, "Nothing of phasegate's was installed; nothing changed.")


worktree_app = typer.Typer(
    name="worktree", help="Manage work items' git worktrees.", no_args_is_help=True
)
app.add_typer(worktree_app)


@worktree_app.command("remove")
def worktree_remove(
    name: Annotated[str, typer.Argument(help="The work item whose worktrees to remove.")],
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Remove even with uncommitted changes or unmerged commits (the branch is kept), "
            "or the worktrees of parallel items a next run would resume.",
        ),
    ] = False,
    repo: RepoOption = None,
) -> None:
    """Remove a work item's worktree once its branch is merged (its branch is kept), and the
    worktrees, branches and refs its parallel items left behind."""
    from phasegate.config import load_config
    from phasegate.engine.fanout_git import (
        remove_task_refs,
        remove_task_worktrees,
        task_refs,
        task_worktree_owner,
        task_worktrees,
    )
    from phasegate.engine.items import locate_item
    from phasegate.engine.worktree import (
        check_worktree,
        describe,
        git_prune,
        landing_steps,
        remove_worktree,
    )
    from phasegate.errors import NotFoundError
    from phasegate.workflow.registry import WorkflowRegistry

    root = _repo(repo)
    try:
        item = locate_item(root, name, WorkflowRegistry(root), load_config(root))
    except NotFoundError:
        owner = task_worktree_owner(root, name)
        if owner is None:
            raise
        raise BadInputError(
            f"{name!r} is a worktree of the parallel items of work item {owner!r}, not a work "
            f"item; remove them with: phasegate worktree remove {owner}"
        ) from None
    if item.running():
        from phasegate.engine.live_run import watch_command
        from phasegate.errors import BusyError

        # Its agents work in those worktrees now: removing them would lose their work.
        raise BusyError(
            f"not removing the worktrees of {name!r}: another phasegate process is running "
            f"it and its agents work there; wait for it to finish (follow it with "
            f"{watch_command(item.name)})"
        )
    state = item.load()
    ended = state.status in ("completed", "stopped") or state.at == "@end"  # blocked end too
    tasks = task_worktrees(root, item.name)
    # The refs its parallel loops keep (refs/phasegate/ITEM/...): a next run resumes from
    # them; once the item has ended, a loop it left unfinished left them for nothing.
    refs = task_refs(root, item.name) if ended else []
    if not state.worktree and not tasks and not refs:
        raise BadInputError(f"work item {name!r} has no worktree")
    if tasks:
        if not ended and not force:
            raise BadInputError(
                f"not removing the worktrees of {name}'s parallel items "
                f"({', '.join(tasks.paths or tasks.branches)}): the item is {state.status} and "
                "its next run resumes them; pass --force to remove them anyway"
            )
        remove_task_worktrees(root, tasks)
        shown = ", ".join(tasks.paths) if tasks.paths else "none"
        out.print(
            f"Removed the worktrees of {name}'s parallel items ({shown}) and their "
            f"{len(tasks.branches)} branch(es).",
            markup=False,
        )
    if refs:
        remove_task_refs(root, refs)
        out.print(f"Removed the refs its parallel loops left: {', '.join(refs)}.", markup=False)
    if (tasks or refs) and not state.worktree:
        return
    assert state.worktree is not None
    check = check_worktree(root, state.worktree, state.get("branch"))
    branch = state.get("branch")
    recreate = f"git worktree add {state.worktree}" + (f" {branch}" if branch else "")
    if not check.exists:
        git_prune(root)  # git's record of it goes too
        again = "" if ended else f"; its next run needs it again: {recreate}"
        out.print(f"{state.worktree} is already gone{again}.", markup=False)
        return
    if not check.safe_to_remove and not force:
        steps = landing_steps(check, state.worktree)
        if check.uncommitted:  # the problem named them already
            steps[0] = "commit them there"
        raise BadInputError(
            f"not removing {state.worktree}: {describe(check, state.worktree)}; "
            f"{', then '.join(steps) or 'merge it'} first, or pass --force to remove it "
            "anyway (the branch is kept)"
        )
    remove_worktree(root, state.worktree, force=force)
    kept = "was gone already" if check.branch_missing else "is kept"
    out.print(f"Removed {state.worktree}; branch {state.get('branch')} {kept}.", markup=False)
    if not ended:
        warn(
            f"work item {name!r} is {state.status}: its next run works in {state.worktree}; "
            f"make it again first: {recreate}"
        )
