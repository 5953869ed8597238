"""Transition validation (seed 000, interface 1): proceed, warning, or blocked.

Hard prerequisites block (implement without spec.md, create-tasks without
plan.md), as does a required previous artifact a completed node made and that is
gone since (design after spec.md was deleted); skipping nodes, re-running a
completed one, or a missing soft prerequisite warns. Works on the top-level
nodes of any workflow: the nodes that may come next from ``current`` are those
its ``pass`` (and ``also``) edges lead to, following the mode's skips.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from phasegate.workflow.model import AgentNode, EndNode, GateNode, Workflow
from phasegate.workflow.routing import target_of

TransitionType = Literal["proceed", "warning", "blocked"]


@dataclass(frozen=True)
class TransitionResult:
    """The outcome of :func:`validate_transition`."""

    type: TransitionType
    message: str | None = None

    @property
    def allowed(self) -> bool:
        return self.type != "blocked"


def successors(workflow: Workflow, node_id: str) -> list[str]:
    """The top-level nodes that follow ``node_id`` when it passes (and its ``also`` ones)."""
    scope = list(workflow.nodes)
    index = next(i for i, n in enumerate(scope) if n.id == node_id)
    found: list[str] = []
    for outcome in ("pass", "done"):
        target = target_of(scope, index, outcome)
        if target is not None and not target.startswith("@"):
            found.append(target)
    gate_targets = [c.to for c in getattr(scope[index], "choices", {}).values()]
    found += [t for t in gate_targets if not t.startswith("@")]
    found += list(scope[index].also)
    return list(dict.fromkeys(found))


def phase_node(workflow: Workflow, label: str) -> str | None:
    """The top-level node ``run --phase``/``--until`` ``label`` starts: the first node
    named by its id or label that is not an end node (an end node, labelled or not, is no
    phase: starting it would end the item with nothing run). ``None``: no such phase."""
    for node in workflow.nodes:
        if (node.id == label or node.label == label) and not isinstance(node, EndNode):
            return node.id
    return None


def phase_names(workflow: Workflow) -> list[str]:
    """The phases ``run --phase``/``--until`` take, in graph order: each top-level node's
    label, else its id, end nodes left out."""
    names: list[str] = []
    for node in workflow.nodes:
        name = node.label or node.id
        if not isinstance(node, EndNode) and name not in names:
            names.append(name)
    return names


def phase_refusal(workflow: Workflow, label: str) -> str:
    """The line refusing ``label`` for ``run --phase``/``--until`` (no :func:`phase_node`):
    an end node's name says it ends the workflow; either way the phases are listed."""
    known = ", ".join(phase_names(workflow))
    if any(n.id == label or n.label == label for n in workflow.nodes):
        return (
            f"{label!r} is an end of workflow {workflow.name!r}, not a phase to run "
            f"(phases: {known})"
        )
    return f"unknown phase {label!r} in workflow {workflow.name!r} (phases: {known})"


def expected_next(
    workflow: Workflow, current: str | None, completed: Collection[str], skipped: Collection[str]
) -> list[str]:
    """The nodes that may run next in order, following mode skips."""
    if current is None:
        candidates = [workflow.nodes[0].id]
    elif current not in completed:
        return [current]
    else:
        candidates = successors(workflow, current)
    result: list[str] = []
    seen: set[str] = set()
    while candidates:
        name = candidates.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in skipped:
            candidates.extend(successors(workflow, name))
        else:
            result.append(name)
    return result


def producers(workflow: Workflow, file: str) -> list[str]:
    """The top-level nodes whose declared outputs include ``file``."""
    return [
        n.id
        for n in workflow.nodes
        if isinstance(n, AgentNode) and any(o.file == file for o in n.outputs)
    ]


def validate_transition(
    workflow: Workflow,
    current: str | None,
    target: str,
    artifacts: Mapping[str, bool],
    *,
    completed: Collection[str] = (),
    skipped: Collection[str] = (),
    started: Collection[str] | None = None,
    decisions: Mapping[str, str | None] | None = None,
    item: str = "ITEM",
) -> TransitionResult:
    """Decide whether moving from ``current`` to ``target`` may go ahead.

    ``artifacts`` says which files exist; ``completed`` lists the nodes already
    completed; ``skipped`` the nodes the mode skips; ``started`` (when known) the
    nodes started, so an unfinished ``current`` is called in progress only if it is.
    ``decisions`` (when known): each decision's answered choice (``None``: not answered),
    so a jump past a gate with ``required`` choices is blocked until one is the answer.
    """
    node = workflow.node(target)
    for gate in required_gates_passed(workflow, target, skipped, decisions):
        from phasegate.engine.answers import answer_command

        decision = gate.decision or gate.id
        needs = [c for c in gate.required if gate.choices[c].note == "required"]
        answer = answer_command(item, decision, list(gate.required), notes_required=needs)
        needed = f"{decision} is answered {' or '.join(gate.required)}"
        if decisions is not None and decision not in decisions:
            # Not asked yet: `phasegate answer` has nothing to answer; --answer gives it ahead.
            ahead = answer.split(f" {decision} ", 1)[1]
            return TransitionResult(
                "blocked",
                f"cannot start {target}: no run goes past gate {gate.id} until decision "
                f"{needed}, and it is not asked yet (phasegate run {item}, without --phase, "
                f"runs what comes before it and asks it; or answer it ahead: "
                f"phasegate run {item} --answer {decision}={ahead})",
            )
        return TransitionResult(
            "blocked",
            f"cannot start {target}: no run goes past gate {gate.id} until decision "
            f"{needed} (answer it: {answer}; or "
            f"phasegate run {item}, without --phase, to be asked)",
        )
    missing_hard = [f for f in node.prerequisites.hard if not artifacts.get(f, False)]
    if missing_hard:
        made_by = [p for f in missing_hard for p in producers(workflow, f)]
        hint = f"; run the {' and '.join(made_by)} phase first" if made_by else ""
        if len(made_by) == 1 and not workflow.commands:
            hint += f": phasegate run {item} --phase {made_by[0]}"
        return TransitionResult(
            "blocked",
            f"cannot start {target}: {', '.join(missing_hard)} "
            f"{'is' if len(missing_hard) == 1 else 'are'} missing or empty (hard "
            f"prerequisite){hint}",
        )
    lost = lost_previous(workflow, node, artifacts, completed, item)
    if lost is not None:
        return TransitionResult("blocked", f"cannot start {target}: {lost}")
    warnings: list[str] = []
    expected = expected_next(workflow, current, completed, skipped)
    if target not in expected:
        if target in completed:
            warnings.append(f"{target} is already complete; it will run again")
        else:
            passed = skipped_between(workflow, target, completed, skipped)
            if passed:
                warnings.append(f"skipping {', '.join(passed)} (not completed)")
            elif current is not None and current not in completed:
                warnings.append(_left_behind(current, target, started))
    missing_soft = [
        f
        for f in node.prerequisites.soft
        if not artifacts.get(f, False) and not _only_skipped_produce(workflow, f, skipped)
    ]
    if missing_soft:
        warnings.append(f"{', '.join(missing_soft)} missing (soft prerequisite)")
    if warnings:
        return TransitionResult("warning", "; ".join(warnings))
    return TransitionResult("proceed")


def required_gates_passed(
    workflow: Workflow,
    target: str,
    skipped: Collection[str],
    decisions: Mapping[str, str | None] | None,
) -> list[GateNode]:
    """The gates with ``required`` choices before ``target`` (in the workflow's order, not
    skipped by the mode) whose decision does not hold one of them."""
    if decisions is None:
        return []
    names = [n.id for n in workflow.nodes]
    return [
        n
        for n in workflow.nodes[: names.index(target)]
        if isinstance(n, GateNode)
        and n.required
        and n.id not in skipped
        and decisions.get(n.decision or n.id) not in n.required
    ]


def lost_previous(
    workflow: Workflow,
    node: object,
    artifacts: Mapping[str, bool],
    completed: Collection[str],
    item: str,
) -> str | None:
    """The block of a node whose required ``previous`` artifact is missing or empty though
    the node that made it completed (deleted since, say): going on would run the node
    without it, and a run of the node that made it makes it again."""
    previous = getattr(node, "previous", None)
    if not previous or not getattr(node, "previous_required", False):
        return None
    if artifacts.get(previous, False):
        return None
    made_by = [p for p in producers(workflow, previous) if p in completed]
    if not made_by:
        return None  # never made: the soft prerequisite's warning (or the node's blocker)
    again = f": phasegate run {item} --phase {made_by[0]}" if not workflow.commands else ""
    return (
        f"{previous}, which the {made_by[0]} phase makes, is missing or empty though that "
        f"phase completed; put it back, or run the {made_by[0]} phase again{again}"
    )


def _left_behind(current: str, target: str, started: Collection[str] | None) -> str:
    """The warning for leaving ``current`` (not completed) to start ``target``: it is in
    progress only when it was started."""
    if started is not None and current in started:
        return f"{current} is in progress and will be left incomplete"
    state = "has not started" if started is not None else "is not completed"
    return f"{current} is the next phase, not {target} ({current} {state})"


def skipped_between(
    workflow: Workflow, target: str, completed: Collection[str], skipped: Collection[str]
) -> list[str]:
    """Earlier nodes on the way to ``target`` (agents, gates, loops, checks, actions: all
    but end nodes) neither completed nor mode-skipped."""
    names = [n.id for n in workflow.nodes]
    index = names.index(target)
    return [
        n.id
        for n in workflow.nodes[:index]
        if not isinstance(n, EndNode) and n.id not in completed and n.id not in skipped
    ]


def _only_skipped_produce(workflow: Workflow, name: str, skipped: Collection[str]) -> bool:
    """A file only mode-skipped nodes produce is absent by choice, not by mistake."""
    made_by = producers(workflow, name)
    return bool(made_by) and all(p in skipped for p in made_by)
