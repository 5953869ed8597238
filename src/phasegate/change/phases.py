"""Seed 002's phase-only state machine, as data: the phases and the moves between them.

``STATE.yaml``'s ``phase`` field alone decides what ``plan``, ``impl`` and
``archive`` do (WF-R1). The phases are the labels of the ``change``
workflow's nodes; the moves below are exactly the seed's state diagram, and
the change view checks every phase change it records against them.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from phasegate.engine.runner import CommandRefused

if TYPE_CHECKING:  # state.py imports this module
    from phasegate.change.state import ChangeState


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


LimitChoice = Literal["implement", "continue"]
#: How ``plan`` answers the planning-limit question (``--on-limit CHOICE``), in this order.
LIMIT_CHOICES: tuple[LimitChoice, ...] = ("implement", "continue")


def limit_answer(change_id: str, choices: Sequence[str]) -> str:
    """The ``plan`` command answering the planning limit with any of ``choices``."""
    flags = " or ".join(f"--on-limit {c}" for c in choices if c in LIMIT_CHOICES)
    return f"phasegate plan {change_id} {flags or '--on-limit continue'}"


def manual_fix_command(change_id: str) -> str:
    """What to run once a change stopped for a fix by hand is fixed: a new review
    (``impl`` alone, its default, implements the open tasks again instead)."""
    return f"phasegate impl {change_id} --review-only"


def archive_conflict_command(change_id: str) -> str:
    """What to do once ``archive`` found conflicts (STATE.yaml ``archive_conflicts``): a plain
    ``archive ID`` would find them again."""
    return (
        "merge the conflicting requirements into the change's specs/ by hand, then "
        f"phasegate archive {change_id} --resolved"
    )


def next_command(phase: ChangePhase, change_id: str, state: ChangeState | None = None) -> str:
    """What a person (or agent) should run next for a change in ``phase`` (from its label).

    With the change's ``state``, a pending planning-limit question is taken into account:
    a bare ``plan ID`` would only ask it again, so the command is ``plan``'s answer to it.
    Once that question is answered (``phasegate answer``), a bare ``plan ID`` acts on it.
    """
    from phasegate.workflow.prompts import render
    from phasegate.workflow.registry import WorkflowRegistry

    plan = state.plan if state is not None else None
    impl = state.impl if state is not None else None
    if phase is ChangePhase.IMPLEMENTING and impl is not None and impl.step == "stopped":
        return manual_fix_command(change_id)
    if phase is ChangePhase.COMPLETE and state is not None and state.archive_conflicts:
        return archive_conflict_command(change_id)
    pending = plan is not None and plan.step == "decide" and plan.question is not None
    if phase is ChangePhase.PROPOSED and plan is not None and pending:
        # Implementing as it is needs every issue left to be minor (change-minor-issues).
        minor = not any(i.severity == "high" for i in plan.issues)
        return limit_answer(change_id, LIMIT_CHOICES if minor else ("continue",))
    label = WorkflowRegistry().get("change").workflow.labels.get(phase.value)
    text = label.next if label is not None else f"phasegate plan {change_id}"
    return " ".join(render(text, {"item": change_id}).split())
