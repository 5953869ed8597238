"""``phasegate hook pre-tool-use``: deny an agent's direct edits of phasegate's state.

Installed as a Claude Code PreToolUse hook on the file-editing tools. When an
Edit/Write/MultiEdit/NotebookEdit (or any other tool given a ``file_path`` or
``notebook_path``, read-only tools excepted) targets a work item's state
file, journal or review history, anything under ``.phasegate/locks`` or
``.phasegate/cache``, or the records of agent calls phasegate keeps in the user cache
folder (see :mod:`phasegate.engine.protect_pending`), the call is denied with the
command to run instead.

It cannot deadlock: the denial names the way forward (``phasegate status`` /
``phasegate run``, or restoring a corrupt file from git), phasegate's own
writes do not go through Claude Code's tools, and a guard that fails for any
reason allows the call rather than blocking the session. Shell commands are
not inspected: telling a state write from a read in arbitrary shell is
guesswork, and the guard must not deny what it cannot judge.
"""

from __future__ import annotations

from pathlib import Path

from phasegate.integrations.claude_code.layout import load_layout
from phasegate.repo_paths import (
    CACHE_DIR,
    CONFIG_DIR,
    LOCKS_DIR,
    WORKTREES_DIR,
    find_repo_quick,
    main_checkout,
    user_cache_dir,
)
from phasegate.suggested_commands import workflow_command

TYPE_CHECKING = False  # typing is not imported at run time (8 ms of every hook call)
if TYPE_CHECKING:
    from typing import Any

#: The tools the install's matcher sends here.
GUARDED_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
#: Tools that take a path but never change the file.
READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
PATH_KEYS = ("file_path", "notebook_path")
#: The folder of the user cache folder holding the records of running agent calls (as
#: :data:`phasegate.engine.protect_pending.RECORDS_DIR`; not imported: hooks stay light).
RECORDS_DIR = "guard"


def _target(payload: dict[str, Any]) -> Path | None:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            path = Path(value).expanduser()
            if not path.is_absolute():
                path = Path(str(payload.get("cwd") or ".")) / path
            return path.resolve()
    return None


def _as_in_main(path: Path, repo: Path) -> Path:
    """A path inside an item worktree, mapped to the same place in the main checkout."""
    worktrees = repo / CONFIG_DIR / WORKTREES_DIR
    if worktrees in path.parents:
        parts = path.relative_to(worktrees).parts
        if len(parts) > 1:
            return repo.joinpath(*parts[1:])
    return path


def protected(path: Path) -> tuple[str, str | None, list[str], str] | None:
    """``(what, item, its workflow's commands, the workflow)`` when ``path`` is
    phasegate-owned state, else ``None``."""
    records = (user_cache_dir() / RECORDS_DIR).resolve()
    if path == records or records in path.parents:
        return "the record phasegate keeps of files agents may not change", None, [], ""
    repo = find_repo_quick(main_checkout(path.parent))
    if repo is None or not (repo / CONFIG_DIR).is_dir():
        return None
    repo = repo.resolve()
    path = _as_in_main(path, repo)
    for folder in (LOCKS_DIR, CACHE_DIR):
        if (repo / CONFIG_DIR / folder) in path.parents:
            return f"a file phasegate keeps under {CONFIG_DIR}/{folder}", None, [], ""
    layout = load_layout(repo)
    for name, workflow in layout.get("workflows", {}).items():
        names = set(workflow.get("files") or ())
        if path.name in names and path.parent.parent == (repo / workflow["items_dir"]).resolve():
            commands = [str(c) for c in workflow.get("commands") or ()]
            what = f"the {path.name} of work item {path.parent.name!r}"
            return what, path.parent.name, commands, name
    return None


def deny_reason(
    path: Path,
    what: str,
    item: str | None,
    commands: list[str] | None = None,
    workflow: str = "",
) -> str:
    """The message Claude Code shows the agent (and the agent should show the user)."""
    if item is None:
        return (
            f"{path} is {what}, written only by phasegate itself. Do not edit it; "
            "run `phasegate status` to see the work items."
        )
    if commands:  # a workflow with its own commands (plan, impl...): `run` refuses its items
        named = ", ".join(f"`{workflow_command(workflow, c, item)}`" for c in commands)
        return (
            f"{path} is {what}: phasegate writes it, and a hand edit would bypass the "
            f"workflow it enforces. Do not edit it. Instead run `phasegate status {item}` to "
            f"see where the item stands and the command it names next ({named}) to advance "
            f"it. If the file is corrupt, restore it from git and run `phasegate status {item}`."
        )
    return (
        f"{path} is {what}: phasegate writes it, and a hand edit would bypass the "
        f"workflow it enforces. Do not edit it. Instead run `phasegate status {item}` to "
        f"see where the item stands and `phasegate run {item}` to advance it (add "
        "--phase, --partial or --yes when its message asks for them). If the file is "
        f"corrupt, restore it from git and run `phasegate status {item}`."
    )


def pre_tool_use(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The PreToolUse answer: a deny decision, or ``None`` to let the call go ahead."""
    if str(payload.get("tool_name", "")) in READ_ONLY_TOOLS:
        return None
    path = _target(payload)
    if path is None:
        return None
    found = protected(path)
    if found is None:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": deny_reason(path, *found),
        }
    }
