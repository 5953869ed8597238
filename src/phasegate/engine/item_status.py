"""What ``phasegate status NAME --json`` prints for a work item (kept apart from
:mod:`phasegate.api`, which imports the whole engine, so ``status`` does not)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phasegate.engine.budget import budget_status
from phasegate.engine.live_run import live_path, read_live, with_live_run
from phasegate.engine.spend import Spend, read_spend

if TYPE_CHECKING:
    from phasegate.engine.item import WorkItem
    from phasegate.engine.state import EngineState


def status_of(item: WorkItem, state: EngineState) -> dict[str, Any]:
    """What ``phasegate status NAME --json`` prints for ``item``."""
    from phasegate.engine.answers import with_journaled_answers

    data = item.status(with_journaled_answers(item, state))
    worktree = state.worktree
    if worktree and data.get("nextCommand") and not (item.repo / worktree).is_dir():
        # Removed by hand or by `phasegate worktree remove`: a run would stop on it.
        branch = state.get("branch")
        again = f"git worktree prune && git worktree add {worktree}" + (
            f" {branch}" if branch else ""
        )
        data["nextCommand"] = f"{again} (its worktree is missing), then: {data['nextCommand']}"
    if state.status in ("completed", "stopped") or state.at == "@end":  # ended (blocked too)
        from phasegate.engine.fanout_git import task_worktrees

        left = task_worktrees(item.repo, item.name)
        if left:  # `phasegate worktree remove NAME` removes them
            data["taskWorktrees"] = {"paths": list(left.paths), "branches": list(left.branches)}
    data["budget"] = budget_status(item.config, item.workflow.name, state, item.journal.path)
    data["usage"] = with_failed_attempts(data.get("usage"), read_spend(item.journal.path))
    return with_live_run(data, read_live(live_path(item.run_lock_path)))


def with_failed_attempts(usage: dict[str, Any] | None, spend: Spend) -> dict[str, Any]:
    """The item's usage with its failed attempts added (their calls, tokens and cost, as
    the budget counts them), and ``failedCalls``: how many of the calls failed."""
    found = dict(usage or {})
    failed = spend.failed_usage()
    for key in ("calls", "inputTokens", "outputTokens"):
        found[key] = int(found.get(key, 0)) + int(failed[key])
    found["costUsd"] = round(float(found.get("costUsd", 0.0)) + float(failed["costUsd"]), 6)
    found["failedCalls"] = int(failed["failedCalls"])
    return found
