"""Where a node's outcomes lead: every outcome a node can end with, and its target.

An outcome a node's ``on`` does not map takes a documented default: ``pass``
and ``done`` go to the next node of the scope; the blocking outcomes stop the
run, blocked; any other unmapped outcome is a problem reported on load.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from phasegate import plugins
from phasegate.workflow.model import (
    ActionNode,
    AgentNode,
    AnyNode,
    CheckNode,
    EndNode,
    ForeachNode,
    GateNode,
)
from phasegate.workflow.parts import BLOCKED_TARGET, COMPLETE, PASS, REVISE

#: Outcomes that go to the next node of the scope when ``on`` does not map them.
SEQUENTIAL = frozenset({"pass", "done"})
#: Outcomes that stop the run, blocked, when ``on`` does not map them.
BLOCKING = frozenset({"checks-failed", "invalid", "exhausted", "interrupted", "merge-conflict"})


def default_target(scope: Sequence[Any], index: int, outcome: str) -> str | None:
    """Where an unmapped ``outcome`` of ``scope[index]`` goes (None: nowhere, a problem)."""
    if outcome in SEQUENTIAL and index + 1 < len(scope):
        return str(scope[index + 1].id)
    if outcome in BLOCKING:
        return BLOCKED_TARGET
    return None


def target_of(scope: Sequence[Any], index: int, outcome: str) -> str | None:
    """Where ``outcome`` of ``scope[index]`` leads: its ``on`` entry, else the default."""
    node = scope[index]
    if outcome in node.on:
        return str(node.on[outcome])
    return default_target(scope, index, outcome)


def action_outcomes(name: str) -> tuple[str, ...]:
    """The outcomes an action plug-in declares (``("done",)`` when it cannot be loaded)."""
    try:
        action = plugins.load("actions", name)
    except plugins.PluginError:
        return ("done",)
    return tuple(getattr(action, "outcomes", ("done",)))


def outcomes(node: AnyNode) -> list[str]:
    """Every outcome ``node`` can end with."""
    if isinstance(node, AgentNode):
        found = [PASS]
        for reviewer in node.all_reviewers():
            found += [a for a in reviewer.on.values() if a not in (PASS, REVISE)]
            if reviewer.on_timeout and reviewer.on_timeout not in (PASS, REVISE):
                found.append(reviewer.on_timeout)
        if node.budget.on_exhausted != COMPLETE:
            found.append(node.budget.on_exhausted)
        if node.checks or node.checks_from is not None:
            found.append("checks-failed")
        if node.at_most_once:
            found.append("interrupted")
        if node.max_visits:
            found.append("exhausted")
        return list(dict.fromkeys(found))
    if isinstance(node, CheckNode):
        return ["pass", "fail"]
    if isinstance(node, ActionNode):
        return list(action_outcomes(node.action))
    if isinstance(node, ForeachNode):
        ends = [n.outcome for n in node.body if isinstance(n, EndNode) and n.outcome != "done"]
        if node.parallel > 1 and node.isolation == "worktree" and node.conflicts.then == "outcome":
            ends.append("merge-conflict")
        return list(dict.fromkeys(["done", *ends]))
    if isinstance(node, GateNode):
        return ["invalid"] + (["exhausted"] if node.max_visits else [])
    return []


def edges(scope: Sequence[Any], index: int) -> list[tuple[str, str]]:
    """``(outcome or choice, target)`` of every way out of ``scope[index]``."""
    node = scope[index]
    found: list[tuple[str, str]] = []
    if isinstance(node, GateNode):
        found += [(name, choice.to) for name, choice in node.choices.items()]
    found += [("also", target) for target in node.also]
    for outcome in outcomes(node):
        target = target_of(scope, index, outcome)
        if target is not None:
            found.append((outcome, target))
    return found
