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
    worktree = state.worktree
    if worktree and data.get("nextCommand") and not (item.repo / worktree).is_dir():
        # Removed by hand or by `phasegate worktree remove`: a run would stop on it.
        branch = state.get("branch")
        again = f"git worktree prune && git worktree add {worktree}" + (
            f" {branch}" if branch else ""
        )
        data["nextCommand"] = f"{again} (its worktree is missing), then: {data['nextCommand']}"
    data["budget"] = budget_status(item.config, item.workflow.name, state, item.journal.path)
    return data
