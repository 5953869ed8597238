"""STATE.yaml of a change: seed 002's ``phase`` field plus readable bookkeeping.

``phase`` decides what each command does (WF-R1) and a person may edit it by
hand: the change view reads it back before every run. ``plan`` and ``impl``
say where inside that command the change stands (its step and iteration),
rendered from the engine state. A STATE.yaml written by hand needs only
``change_id`` and ``phase``; the rest has defaults. Keys a person adds are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from phasegate.change.phases import ChangePhase
from phasegate.change.review import Finding, ReviewVerdict
from phasegate.errors import StateCorruptError

PlanStep = Literal["proposal", "specs", "tasks", "challenge", "reproposal", "decide", "done"]
ImplStep = Literal["implement", "review", "fix", "stopped", "done"]
ChallengeVerdictName = Literal["APPROVED", "NEEDS_REVISION", "REJECTED"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=False)


class Usage(_Record):
    """Agent calls, tokens and cost summed over the change (snake_case, as STATE.yaml is)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0


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
    round: str | None = None
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
    mode: str = "standard"
    planning_iterations: int = Field(default=3, ge=1, le=50)
    implementation_iterations: int = Field(default=3, ge=1, le=50)
    created: str = ""
    updated: str = ""
    #: The round counter of a hand-written STATE.yaml (a review round is ``epoch.iteration``).
    epoch: int = 1
    base_commit: str | None = None
    worktree: str | None = None
    plan: PlanProgress | None = None
    impl: ImplProgress | None = None
    #: Living spec files this change edits -> whether they existed when it began.
    spec_bases: dict[str, bool] = Field(default_factory=dict)
    archived_to: str | None = None
    #: What the last ``archive`` found both the change and the living specs changed
    #: (``specs/auth.md 'AUTH-R1: Login'``); cleared once the change is archived.
    archive_conflicts: list[str] = Field(default_factory=list)
    history: list[TransitionRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_document(cls, data: dict[str, Any], path: Path) -> ChangeState:
        from pydantic import ValidationError

        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"])
            raise StateCorruptError(
                f"state file {path} is invalid at {field}: {error['msg']}; it was left untouched"
            ) from None
