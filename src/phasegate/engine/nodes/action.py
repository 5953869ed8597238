"""The ``action`` node: one plug-in step, its outcome journaled so a resume does not redo it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate.engine.plugin_api import Action, Task, plugin
from phasegate.errors import StateCorruptError, WorkflowError
from phasegate.workflow.model import ActionNode

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Steps


def run_action(run: Run, path: str, node: ActionNode, task: Task | None) -> Steps:
    from phasegate.engine.walk import Outcome

    ns = run.state.node(path)
    if run.over_visit_limit(path):
        return Outcome("exhausted")
    key = f"{path}#{ns.visit}/action"
    recorded = run.item.recorded().action(key)
    action: Action = plugin("actions", node.action)
    if recorded is not None:
        if recorded not in action.outcomes:
            raise StateCorruptError(
                f"journal {run.item.journal.path}: the recorded outcome of {key} is "
                f"{recorded!r}, which action {node.action!r} does not declare "
                f"({', '.join(action.outcomes)}): the journal was edited; it was left untouched"
            )
        action.replay(run.context(path, node, task, node.with_), recorded)
        run.item.applied(key)  # its outcome is recorded below, before the next commit
        return Outcome(recorded)
    outcome = action.run(run.context(path, node, task, node.with_))
    if outcome not in action.outcomes:
        raise WorkflowError(
            f"action {node.action!r} ended with {outcome!r}, which it does not declare "
            f"({', '.join(action.outcomes)})"
        )
    run.item.record("action.done", key=key, node=path, action=node.action, outcome=outcome)
    yield from ()
    return Outcome(outcome)
