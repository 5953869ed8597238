"""The node kinds' handlers: each a generator of effects returning the node's outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from phasegate.workflow.model import (
    ActionNode,
    AgentNode,
    AnyNode,
    CheckNode,
    ForeachNode,
    GateNode,
)

if TYPE_CHECKING:
    from phasegate.engine.plugin_api import Task
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Steps

Handler = Callable[["Run", str, Any, "Task | None"], "Steps"]


def handler_for(node: AnyNode) -> Handler:
    """The handler of ``node``'s kind."""
    if isinstance(node, AgentNode):
        from phasegate.engine.nodes.agent import run_agent

        return run_agent
    if isinstance(node, GateNode):
        from phasegate.engine.nodes.gate import run_gate

        return run_gate
    if isinstance(node, ForeachNode):
        from phasegate.engine.nodes.foreach import run_foreach

        return run_foreach
    if isinstance(node, CheckNode):
        from phasegate.engine.nodes.check import run_check

        return run_check
    if isinstance(node, ActionNode):
        from phasegate.engine.nodes.action import run_action

        return run_action
    raise TypeError(f"no handler for node kind {type(node).__name__}")
