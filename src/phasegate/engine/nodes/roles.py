"""Who an agent node calls, decided at run time, and how long a review may take.

A node's ``executor`` is a workflow role; with ``executor_selector`` a plug-in
picks, once per visit, the agent who plays it (seed 004's task agents from
``.claude/agents``). The choice is kept in the node's state and journaled with
its reason, so a resumed run calls the same agent. A reviewer's time limit may
be a value of the item's data; one with ``on_timeout`` that runs out of time
ends with that action instead of being retried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phasegate.agents.base import AgentResult
from phasegate.engine.nodes.agent_outcome import conclude
from phasegate.engine.plugin_api import ReviewerSelector, Task, plugin
from phasegate.verdicts.model import Issue, Verdict
from phasegate.workflow.model import AgentNode
from phasegate.workflow.parts import Reviewer

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Outcome

EXECUTOR_KEY = "executor_selected"


def executor_role(run: Run, path: str, node: AgentNode, task: Task | None) -> str:
    """The agent who executes ``node`` in this visit (its ``executor`` without a selector)."""
    workflow_role = str(node.executor)
    if node.executor_selector is None:
        return workflow_role
    ns = run.state.node(path)
    chosen = ns.get(EXECUTOR_KEY)
    if isinstance(chosen, dict) and chosen.get("role"):
        return str(chosen["role"])
    ref = node.executor_selector
    selector: ReviewerSelector = plugin("selectors", ref.plugin)
    selection = selector.select(run.context(path, node, task, ref.with_), ref.with_)
    record: dict[str, Any]
    if selection is None:
        record = {"role": workflow_role, "reason": f"{ref.plugin} chose no agent"}
    else:
        record = {"role": selection.role, "reason": selection.reason, **dict(selection.data)}
    ns = run.state.node(path)
    ns[EXECUTOR_KEY] = record
    run.item.record("executor.selected", node=path, plays=workflow_role, **record)
    run.save(lazy=True)
    return str(record["role"])


def plays(role: str, workflow_role: str | None) -> str | None:
    """The workflow role ``role`` stands in for, when it is an agent chosen at run time."""
    return workflow_role if workflow_role is not None and role != workflow_role else None


def review_timeout(run: Run, reviewer: Reviewer) -> float | None:
    """A review's time limit in seconds (``None``: the configured agent timeout)."""
    value = reviewer.timeout
    if isinstance(value, str):
        raw = run.state.data.get(value)
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
            return None
        return float(raw)
    return value


def timed_out(
    run: Run,
    path: str,
    node: AgentNode,
    reviewer: Reviewer,
    index: int,
    role: str,
    result: AgentResult,
) -> Outcome | None:
    """A review that ran out of time: its ``on_timeout`` applies (it is not retried)."""
    ns = run.state.node(path)
    run.item.record(
        "review.timeout",
        node=path,
        reviewer=reviewer.key,
        role=role,
        iteration=ns.iteration,
        error=result.error,
        action=reviewer.on_timeout,
        sync_now=True,
    )
    verdict = Verdict(
        word="TIMEOUT",
        issues=(Issue(severity="blocker", description=str(result.error)),),
        summary=str(result.error),
        source="timeout",
    )
    return conclude(run, path, node, verdict, str(reviewer.on_timeout), reviewer.key, index)
