"""Seed 002's phase-only state machine, as data: the phases and the moves between them.

``STATE.yaml``'s ``phase`` field alone decides what ``plan``, ``impl`` and
``archive`` do (WF-R1). The phases are the labels of the ``change``
workflow's nodes; the moves below are exactly the seed's state diagram, and
the change view checks every phase change it records against them.
"""

from __future__ import annotations

from enum import StrEnum

from phasegate.engine.runner import CommandRefused


class ChangePhase(StrEnum):
    """The ``phase`` of a change (WF-R1)."""

    PROPOSED = "proposed"
    CHALLENGED = "challenged"
    REJECTED = "rejected"
    IMPLEMENTING = "implementing"
    COMPLETE = "complete"
    ARCHIVED = "archived"


P = ChangePhase

#: ``(from, to) -> what causes it``, the seed's state diagram edge by edge.
TRANSITIONS: dict[tuple[ChangePhase, ChangePhase], str] = {
    (P.PROPOSED, P.CHALLENGED): "challenge APPROVED (or iteration limit with minor issues)",
    (P.PROPOSED, P.PROPOSED): "challenge NEEDS_REVISION -> reproposal",
    (P.PROPOSED, P.REJECTED): "challenge REJECTED",
    (P.REJECTED, P.PROPOSED): "manual edit + re-challenge",
    (P.CHALLENGED, P.IMPLEMENTING): "impl",
    (P.IMPLEMENTING, P.IMPLEMENTING): "review NEEDS_FIX -> auto-fix",
    (P.IMPLEMENTING, P.COMPLETE): "review APPROVED",
    (P.COMPLETE, P.ARCHIVED): "archive",
}

#: A command run in a phase it does not act on (the seed's ``ChangeNotReady``).
ChangeNotReady = CommandRefused


def check_transition(current: ChangePhase, target: ChangePhase) -> str:
    """The cause of the move ``current -> target``; ``AssertionError`` if the seed has no such edge.

    Only phasegate's own code moves phases, so an unknown edge is a bug, not bad input.
    """
    cause = TRANSITIONS.get((current, target))
    if cause is None:
        raise AssertionError(f"no transition {current} -> {target} in seed 002's state machine")
    return cause


def next_command(phase: ChangePhase, change_id: str) -> str:
    """What a person (or agent) should run next for a change in ``phase`` (from its label)."""
    from phasegate.workflow.prompts import render
    from phasegate.workflow.registry import WorkflowRegistry

    label = WorkflowRegistry().get("change").workflow.labels.get(phase.value)
    text = label.next if label is not None else f"phasegate plan {change_id}"
    return " ".join(render(text, {"item": change_id}).split())
