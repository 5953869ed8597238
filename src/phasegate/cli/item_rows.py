"""The rows of ``phasegate status`` (the item table), from the item index where it is fresh.

Each state commit appends the item's brief to the index (see
:mod:`phasegate.engine.index`); the table needs no more than the brief holds,
so an item whose indexed brief was written for its state files (the engine's
and its view's) as they are now is not loaded at all. The others (no entry, a
state file changed since, a workflow whose state a person may edit by hand, a
node waiting on a hard prerequisite whose file may be gone since) are loaded
in full, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate.api import status_of
from phasegate.config import Config
from phasegate.engine.index import fresh_brief, read_index
from phasegate.engine.items import iter_items, locate_item
from phasegate.engine.plugin_api import view_files
from phasegate.engine.state import ENGINE_FILE
from phasegate.errors import PhasegateError
from phasegate.workflow.registry import WorkflowRegistry


def _row_from_brief(
    name: str, workflow_name: str, brief: dict[str, Any], registry: WorkflowRegistry
) -> dict[str, Any] | None:
    workflow = registry.get(workflow_name).workflow
    if workflow.commands:
        return None  # its state file may be edited by hand: read it
    at = brief.get("at")
    if at and not brief.get("inProgress") and brief.get("status") == "active":
        try:
            if workflow.node(str(at)).prerequisites.hard:
                return None  # whether it is blocked depends on files now
        except KeyError:
            return None
    return {
        "id": name,
        "workflow": workflow_name,
        "status": brief.get("status"),
        "inProgress": brief.get("inProgress"),
        "currentPhase": brief.get("currentPhase"),
        "nextCommand": brief.get("nextCommand"),
    }


def item_rows(root: Path, registry: WorkflowRegistry, config: Config) -> list[dict[str, Any]]:
    """One row per work item: what the status table shows (an ``error`` if unreadable)."""
    index = read_index(root)
    rows: list[dict[str, Any]] = []
    for workflow_name, item_name, state_file in iter_items(root, registry, config):
        if state_file.name == ENGINE_FILE:
            names = view_files(registry.get(workflow_name).workflow)
            view = state_file.parent / names[0] if names else None
            brief = fresh_brief(index, f"{workflow_name}/{item_name}", state_file, view)
            row = _row_from_brief(item_name, workflow_name, brief, registry) if brief else None
            if row is not None:
                rows.append(row)
                continue
        rows.append(full_status(root, item_name, workflow_name, registry, config))
    return rows


def full_status(
    root: Path, name: str, workflow_name: str, registry: WorkflowRegistry, config: Config
) -> dict[str, Any]:
    """``status --json``'s entry for one item (an ``error`` entry if it cannot be read)."""
    try:
        item = locate_item(root, name, registry, config, workflow_name, command="status")
        return status_of(item, item.load(read_journal=False))
    except PhasegateError as exc:
        return {"id": name, "workflow": workflow_name, "error": str(exc)}
