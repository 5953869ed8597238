"""Where a node's outcomes lead: every outcome a node can end with, and its target.

An outcome a node's ``on`` does not map takes a documented default: ``pass``
and ``done`` go to the next node of the scope; the blocking outcomes stop the
run, blocked; any other unmapped outcome is a problem reported on load.

A node on a cycle of its scope (one its own outcomes and choices can lead back
to) has a visit limit even without ``max_visits``: :data:`DEFAULT_CYCLE_VISITS`,
so no loop of a workflow runs without end.
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
#: An agent node's outcome when its executor's call failed every attempt (``on`` maps it).
FAILED = "failed"
#: An agent node's outcome when its executor answered ``BLOCKED: reason`` (``on`` maps it).
BLOCKED = "blocked"
#: An agent node's outcome when a reviewer's call failed every attempt (``on`` maps it).
REVIEW_FAILED = "review-failed"
#: The visits a node on a cycle may have when it sets no ``max_visits``.
DEFAULT_CYCLE_VISITS = 10


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


def outcomes(node: AnyNode, on_cycle: bool = False) -> list[str]:
    """Every outcome ``node`` can end with (``on_cycle``: it is on a cycle of its scope, so
    it has a visit limit even without ``max_visits``)."""
    limited = bool(node.max_visits) or on_cycle
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
        # Only when mapped: unmapped, a call failing every attempt stops the run (exit 6),
        # and an answer starting BLOCKED: is the executor's work, reviewed as any.
        found += [name for name in (FAILED, BLOCKED, REVIEW_FAILED) if name in node.on]
        if limited:
            found.append("exhausted")
        return list(dict.fromkeys(found))
    exhausted = ["exhausted"] if limited else []
    # A node its ``when`` skips ends ``pass`` (a foreach ``done``): a gate or an action too.
    skipped = [PASS] if node.when is not None else []
    if isinstance(node, CheckNode):
        return ["pass", "fail", *exhausted]
    if isinstance(node, ActionNode):
        return list(dict.fromkeys([*action_outcomes(node.action), *skipped, *exhausted]))
    if isinstance(node, ForeachNode):
        ends = [n.outcome for n in node.body if isinstance(n, EndNode) and n.outcome != "done"]
        if node.parallel > 1 and node.isolation == "worktree" and node.conflicts.then == "outcome":
            ends.append("merge-conflict")
        return list(dict.fromkeys(["done", *ends, *exhausted]))
    if isinstance(node, GateNode):
        return ["invalid", *skipped, *exhausted]
    return []


def node_outcomes(scope: Sequence[Any], index: int) -> list[str]:
    """Every outcome ``scope[index]`` can end with, its default visit limit's included."""
    node = scope[index]
    return outcomes(node, node.id in cyclic(scope))


def _ways_out(scope: Sequence[Any], index: int, on_cycle: bool) -> list[tuple[str, str]]:
    node = scope[index]
    found: list[tuple[str, str]] = []
    if isinstance(node, GateNode):
        found += [(name, choice.to) for name, choice in node.choices.items()]
    for outcome in outcomes(node, on_cycle):
        target = target_of(scope, index, outcome)
        if target is not None:
            found.append((outcome, target))
    return found


#: Scopes whose cycles were found, by the identity of their nodes (each entry keeps its
#: nodes alive, so an identity is never reused while it is here).
_CYCLIC: dict[tuple[int, ...], tuple[tuple[Any, ...], frozenset[str]]] = {}


def cyclic(scope: Sequence[Any]) -> frozenset[str]:
    """The ids of the nodes of ``scope`` that can be entered again by following outcomes and
    gate choices (not ``also``, a person's choice): the nodes on a cycle."""
    key = tuple(map(id, scope))
    known = _CYCLIC.get(key)
    if known is not None:
        return known[1]
    # Every node counted as limited: an ``exhausted`` mapped back into the scope is a way in.
    graph = {n.id: [t for _, t in _ways_out(scope, i, True)] for i, n in enumerate(scope)}
    found: set[str] = set()
    for node in scope:
        seen: set[str] = set()
        stack = list(graph.get(node.id, ()))
        while stack:
            name = stack.pop()
            if name == node.id:
                found.add(node.id)
                break
            if name in seen:
                continue
            seen.add(name)
            stack.extend(graph.get(name, ()))
    result = frozenset(found)
    if len(_CYCLIC) >= 256:
        _CYCLIC.clear()
    _CYCLIC[key] = (tuple(scope), result)
    return result


def edges(scope: Sequence[Any], index: int) -> list[tuple[str, str]]:
    """``(outcome or choice, target)`` of every way out of ``scope[index]``.

    The default visit limit of a node on a cycle is a safety net, not a way out: its
    ``exhausted`` is an edge only where ``on`` maps it (a loop with no other way out is
    still refused), or with ``max_visits``.
    """
    node = scope[index]
    ways = _ways_out(scope, index, "exhausted" in node.on and node.id in cyclic(scope))
    choices = len(node.choices) if isinstance(node, GateNode) else 0
    return [*ways[:choices], *(("also", target) for target in node.also), *ways[choices:]]
