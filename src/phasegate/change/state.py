"""STATE.yaml of a change: seed 002's ``phase`` field plus readable bookkeeping.

``phase`` decides what each command does (WF-R1). ``plan`` and ``impl`` say
where inside that command a run stands (its step and iteration), so a killed
run continues where it stopped instead of starting over; they never choose
between commands. Keys a person adds are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from phasegate.change.phases import ChangePhase, check_transition
from phasegate.change.review import Finding, ReviewVerdict
from phasegate.state.item import UsageTotals, validate_document
from phasegate.state.journal import utc_now

PlanStep = Literal["proposal", "specs", "tasks", "challenge", "reproposal", "decide", "done"]
ImplStep = Literal["implement", "review", "fix", "stopped", "done"]
ChallengeVerdictName = Literal["APPROVED", "NEEDS_REVISION", "REJECTED"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=False)


class Usage(UsageTotals):
    """Agent calls, tokens and cost summed over the change (snake_case, as STATE.yaml is)."""


class ChallengeIssue(_Record):
    """One problem the challenger found in the plan."""

    severity: Literal["high", "medium", "low"]
    description: str
    location: str | None = None


class PlanProgress(_Record):
    """Where ``plan`` stands inside the proposed phase."""

    step: PlanStep = "proposal"
    iteration: int = 1
    specs_done: list[str] = Field(default_factory=list)
    verdict: ChallengeVerdictName | None = None
    summary: str = ""
    issues: list[ChallengeIssue] = Field(default_factory=list)
    question: str | None = None


class ImplProgress(_Record):
    """Where ``impl`` stands inside the implementing phase."""

    step: ImplStep = "implement"
    iteration: int = 1
    layers_done: list[str] = Field(default_factory=list)
    verdict: ReviewVerdict | None = None
    summary: str = ""
    findings: list[Finding] = Field(default_factory=list)
    stop_reason: str | None = None


class TransitionRecord(_Record):
    """One phase change, as the history lists it."""

    at: str
    from_phase: ChangePhase | None = Field(alias="from")
    to: ChangePhase
    cause: str

    model_config = ConfigDict(populate_by_name=True, extra="allow")


class ChangeState(_Record):
    """Everything STATE.yaml records about one change."""

    change_id: str
    phase: ChangePhase
    description: str = ""
    mode: str
    planning_iterations: int = Field(ge=1, le=50)
    implementation_iterations: int = Field(ge=1, le=50)
    created: str
    updated: str
    #: Numbers each (re)start of a loop, so journaled calls of an abandoned
    #: round are never mistaken for the current one's.
    epoch: int = 1
    base_commit: str | None = None
    worktree: str | None = None
    plan: PlanProgress | None = None
    impl: ImplProgress | None = None
    #: Living spec files this change edits -> whether they existed when it began.
    spec_bases: dict[str, bool] = Field(default_factory=dict)
    archived_to: str | None = None
    history: list[TransitionRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    def move(self, target: ChangePhase, detail: str = "") -> TransitionRecord:
        """Move to ``target`` along one of the seed's transitions and record it."""
        cause = check_transition(self.phase, target)
        record = TransitionRecord(
            at=utc_now(),
            **{"from": self.phase},
            to=target,
            cause=detail or cause,
        )
        self.history.append(record)
        self.phase = target
        return record

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_document(cls, data: dict[str, Any], path: Path) -> ChangeState:
        return validate_document(cls, data, path)
