"""The rows of ``phasegate status`` (the item table), from the item index where it is fresh.

Each state commit appends the item's brief to the index (see
:mod:`phasegate.engine.index`); the table needs no more than the brief holds,
so an item whose indexed brief was written for its state files (the engine's
and its view's) as they are now is not loaded at all. The others (no entry, a
state file changed since, a workflow whose state a person may edit by hand, a
node waiting on a hard prerequisite whose file may be gone since, a completed
implement item whose PLAN.md may have open tasks again, an item waiting on a
decision that may have been answered since) are loaded in full, as before. A row
whose item a run is going on for says so (``running``), told by the file that run
keeps next to its run lock (:mod:`phasegate.engine.live_run`), not by its lock.

:func:`quick_item_rows` finds the items through the cached workflow layout
(:mod:`phasegate.integrations.claude_code.layout`) rather than the workflow
loader, so a table whose rows all come from the index loads no workflow, no
config model and no engine at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.engine.index import fresh_brief, read_index
from phasegate.engine.live_run import left_midway, live_runs, with_live_run
from phasegate.errors import PhasegateError, StorageError, is_storage_error
from phasegate.repo_paths import ENGINE_FILE, item_state_files

if TYPE_CHECKING:
    from phasegate.config import Config
    from phasegate.workflow.registry import WorkflowRegistry

#: Workflows whose completed items reopen when a file a person edits says so (an
#: implement item's PLAN.md, a team session's tasks.yaml with open tasks again): their
#: completed rows are read in full.
REOPENABLE = frozenset({"implement", "team"})

#: What decides whether a brief is enough for a row: a workflow's commands, its view's
#: state files, each node's hard prerequisites (``None``: no such node) and its items'
#: journal file (whose last event tells a node a dead run left midway).
Shape = tuple[bool, list[str], Callable[[str], "list[str] | None"], str]


def _row_from_brief(
    name: str, workflow_name: str, brief: dict[str, Any], shape: Shape
) -> dict[str, Any] | None:
    has_commands, _, hard_of, _ = shape
    if has_commands:
        return None  # its state file may be edited by hand: read it
    if brief.get("decisions"):
        return None  # answered since, maybe, while a run asked it (journaled only): read it
    if ((brief.get("inProgress") or {}).get("budget") or {}).get("answer") == "stop":
        return None  # stopped at a budget cap the config may have raised since: read it
    if brief.get("status") == "completed" and workflow_name in REOPENABLE:
        return None  # its PLAN.md (tasks.yaml) may have open tasks again: read it
    at = brief.get("at")
    if at and not brief.get("inProgress") and brief.get("status") == "active":
        hard = hard_of(str(at))
        if hard is None or hard:
            return None  # whether it is blocked depends on files now
    return {
        "id": name,
        "workflow": workflow_name,
        "status": brief.get("status"),
        "inProgress": brief.get("inProgress"),
        "currentPhase": brief.get("currentPhase"),
        "nextCommand": brief.get("nextCommand"),
        **({"blocked": brief["blocked"]} if brief.get("blocked") else {}),
    }


def _rows(
    root: Path,
    items: Iterable[tuple[str, str, Path]],
    shape_of: Callable[[str], Shape],
    full: Callable[[str, str], dict[str, Any]],
) -> list[dict[str, Any]]:
    index = read_index(root)
    live = live_runs(root)  # the runs going on now (read once, not item by item)
    rows: list[dict[str, Any]] = []
    for workflow_name, item_name, state_file in items:
        if state_file.name == ENGINE_FILE:
            shape = shape_of(workflow_name)
            views = shape[1]
            view = state_file.parent / views[0] if views else None
            brief = fresh_brief(index, f"{workflow_name}/{item_name}", state_file, view)
            row = _row_from_brief(item_name, workflow_name, brief, shape) if brief else None
            if row is not None and brief is not None:
                running = live.get((workflow_name, item_name))
                if running:
                    rows.append(with_live_run(row, running))
                    continue
                # No run goes on: a node its last run left midway (killed, Ctrl-C, a failed
                # agent call) is shown so, as `status NAME` shows it.
                failure = left_midway(brief, state_file.parent / shape[3])
                if failure is not None:
                    row["inProgress"] = {**row["inProgress"], "interrupted": True}
                    row["lastFailure"] = failure or None
                rows.append(row)
                continue
        rows.append(full(item_name, workflow_name))
    return rows


def item_rows(root: Path, registry: WorkflowRegistry, config: Config) -> list[dict[str, Any]]:
    """One row per work item: what the status table shows (an ``error`` if unreadable)."""
    from phasegate.engine.items import iter_items
    from phasegate.engine.plugin_api import view_files

    def shape_of(workflow_name: str) -> Shape:
        workflow = registry.get(workflow_name).workflow

        def hard_of(at: str) -> list[str] | None:
            try:
                return list(workflow.node(at).prerequisites.hard)
            except KeyError:
                return None

        return bool(workflow.commands), view_files(workflow), hard_of, workflow.journal_file

    return _rows(
        root,
        iter_items(root, registry, config),
        shape_of,
        lambda name, workflow: full_status(root, name, workflow, registry, config),
    )


def quick_item_rows(root: Path) -> list[dict[str, Any]] | None:
    """:func:`item_rows` with the items found through the cached workflow layout; ``None``
    when the layout names a problem (a config or workflow that does not load), which the
    full path reports as it always has."""
    from phasegate.integrations.claude_code.layout import load_layout

    layout = load_layout(root)
    if layout.get("problems"):
        return None
    workflows: Mapping[str, Any] = layout.get("workflows", {})
    loaded: list[tuple[WorkflowRegistry, Config]] = []

    def full(name: str, workflow: str) -> dict[str, Any]:
        if not loaded:  # the first item the index cannot tell about: load what it needs
            from phasegate.config import load_config
            from phasegate.workflow.registry import WorkflowRegistry

            loaded.append((WorkflowRegistry(root), load_config(root)))
        registry, config = loaded[0]
        return full_status(root, name, workflow, registry, config)

    def shape_of(workflow_name: str) -> Shape:
        described = workflows[workflow_name]
        hard: dict[str, list[str]] = described["prerequisites"]
        files = described.get("files") or []
        journal = str(files[2]) if len(files) > 2 else ".journal.jsonl"
        return bool(described["commands"]), list(described["views"]), hard.get, journal

    return _rows(root, layout_items(root, workflows), shape_of, full)


def layout_items(root: Path, workflows: Mapping[str, Any]) -> list[tuple[str, str, Path]]:
    """``(workflow, item, state file)`` of every work item, as
    :func:`phasegate.engine.items.iter_items` finds them, from the workflow layout."""
    found: list[tuple[str, str, Path]] = []
    seen: set[Path] = set()
    for workflow_name in sorted(workflows):
        described = workflows[workflow_name]
        views = described["views"] if described["commands"] else []
        for name, state_file in item_state_files(
            root / described["items_dir"], views[0] if views else None
        ):
            if state_file not in seen:
                seen.add(state_file)
                found.append((workflow_name, name, state_file))
    return found


def full_status(
    root: Path, name: str, workflow_name: str, registry: WorkflowRegistry, config: Config
) -> dict[str, Any]:
    """``status --json``'s entry for one item (an ``error`` entry if it cannot be read)."""
    from phasegate.engine.item_status import status_of
    from phasegate.engine.items import locate_item

    try:
        item = locate_item(root, name, registry, config, workflow_name, command="status")
        return status_of(item, item.load(read_journal=False))
    except PhasegateError as exc:
        return {"id": name, "workflow": workflow_name, "error": str(exc)}
    except OSError as exc:  # a file of one item not readable: the others are still listed
        if not is_storage_error(exc):
            raise
        error = StorageError.from_os_error(exc, action="access")
        return {"id": name, "workflow": workflow_name, "error": str(error)}
