"""What ``phasegate status NAME --json`` prints for a work item (kept apart from
:mod:`phasegate.api`, which imports the whole engine, so ``status`` does not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phasegate.engine.budget import budget_status

if TYPE_CHECKING:
    from phasegate.engine.item import WorkItem
    from phasegate.engine.state import EngineState


def status_of(item: WorkItem, state: EngineState) -> dict[str, Any]:
    """What ``phasegate status NAME --json`` prints for ``item``."""
    data = item.status(state)
    data["budget"] = budget_status(item.config, item.workflow.name, state, item.journal.path)
    return data
