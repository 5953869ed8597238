"""Seed 002's phase-only state machine, declared as data and checked on every move.

``STATE.yaml``'s ``phase`` field alone decides what ``plan``, ``impl`` and
``archive`` do (WF-R1). The transitions below are exactly the seed's state
diagram; any other move is a bug and is refused.
"""

from __future__ import annotations

from enum import StrEnum

from phasegate.errors import BlockedError


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

#: The phase a new change starts in (``[*] --> proposed: plan (init)``).
INITIAL = P.PROPOSED


class ChangeNotReady(BlockedError):
    """A command was run in a phase it does not act on (the seed's ``ChangeNotReady``)."""


def check_transition(current: ChangePhase, target: ChangePhase) -> str:
    """The cause of the move ``current -> target``; ``AssertionError`` if the seed has no such edge.

    Only phasegate's own code moves phases, so an unknown edge is a bug, not bad input.
    """
    cause = TRANSITIONS.get((current, target))
    if cause is None:
        raise AssertionError(f"no transition {current} -> {target} in seed 002's state machine")
    return cause


def next_command(phase: ChangePhase, change_id: str) -> str:
    """What a person (or agent) should run next for a change in ``phase``."""
    return {
        P.PROPOSED: f"phasegate plan {change_id}",
        P.CHALLENGED: f"phasegate impl {change_id}",
        P.REJECTED: (
            f"edit the plan by hand, then phasegate plan {change_id} --rechallenge "
            "(the challenger's verdict is at the end of proposal.md)"
        ),
        P.IMPLEMENTING: f"phasegate impl {change_id}",
        P.COMPLETE: f"phasegate archive {change_id}",
        P.ARCHIVED: "nothing: the change is archived",
    }[phase]


def not_ready(change_id: str, phase: ChangePhase, command: str, acts_on: str) -> ChangeNotReady:
    """The error of ``command`` run in the wrong ``phase``: where it stands, what to run."""
    return ChangeNotReady(
        f"change {change_id!r} is in phase {phase.value}; '{command}' acts only on {acts_on}. "
        f"Next: {next_command(phase, change_id)}"
    )
