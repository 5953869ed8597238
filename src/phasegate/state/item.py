"""The state of one work item, as kept in its state file.

Field names follow seed 000's ``.meta.json`` (camelCase: ``currentPhase``,
``reviewerNotes``...). The ``engine`` section is phasegate's own progress: the
cursor inside the current phase, the agent call in flight, and each review
iteration (from which ``.review-history.md`` is rendered). Unknown keys a
person adds are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from phasegate.errors import StateCorruptError

Stage = Literal["execute", "checks", "review"]
ModelT = TypeVar("ModelT", bound=BaseModel)


class _Record(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", validate_assignment=False
    )


class UsageTotals(BaseModel):
    """Tokens and cost summed over agent calls (field names as written, snake_case).

    Subclasses choose how the names appear in their state file.
    """

    model_config = ConfigDict(extra="allow")

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # Prompt tokens served from / written to the provider's cache, counted
    # apart from ``input_tokens`` (they are billed at other rates).
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    def add(
        self,
        input_tokens: int,
        output_tokens: int,
        cost: float | None,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> None:
        self.calls += 1
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cache_read_tokens += cache_read_tokens
        self.cache_write_tokens += cache_write_tokens
        self.cost_usd = round(self.cost_usd + (cost or 0.0), 6)


class Usage(_Record, UsageTotals):
    """Usage as ``.meta.json`` writes it (camelCase)."""


class PhaseRecord(_Record):
    """Seed 000's per-phase fields, plus the reviewer's closing summary and usage."""

    started: str | None = None
    completed: str | None = None
    iterations: int = 0
    reviewer_notes: list[str] = Field(default_factory=list)
    verified: bool | None = None
    review: Literal["approved", "concerns", "skipped", "none"] | None = None
    summary: str | None = None
    usage: Usage = Field(default_factory=Usage)


class IssueRecord(_Record):
    severity: str
    description: str
    location: str | None = None


class IterationRecord(_Record):
    """One executor-reviewer iteration, as ``.review-history.md`` shows it."""

    phase: str
    iteration: int
    timestamp: str
    approved: bool
    unclear: bool = False
    source: str
    summary: str = ""
    issues: list[IssueRecord] = Field(default_factory=list)
    changes: str = ""


class Cursor(_Record):
    """Where the review loop of the current phase stands.

    ``epoch`` numbers each start of a phase, so the journal records of a phase
    restarted fresh are never mistaken for the current run's.
    """

    phase: str
    epoch: int = 0
    iteration: int = 1
    stage: Stage = "execute"
    feedback: list[IssueRecord] = Field(default_factory=list)
    changes: str = ""
    no_review: bool = False


class EngineState(_Record):
    cursor: Cursor | None = None
    epoch: int = 0
    iterations: list[IterationRecord] = Field(default_factory=list)


class ItemState(_Record):
    """Everything recorded about one work item."""

    id: str
    workflow: str
    description: str = ""
    mode: str
    status: Literal["active", "completed"] = "active"
    created: str
    completed: str | None = None
    branch: str | None = None
    worktree: str | None = None
    base_commit: str | None = None
    current_phase: str | None = None
    phases: dict[str, PhaseRecord] = Field(default_factory=dict)
    summary: str | None = None
    usage: Usage = Field(default_factory=Usage)
    engine: EngineState = Field(default_factory=EngineState)

    def phase(self, name: str) -> PhaseRecord:
        """The record of phase ``name``, created empty on first use."""
        return self.phases.setdefault(name, PhaseRecord())

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=False)

    @classmethod
    def from_document(cls, data: dict[str, Any], path: Path) -> ItemState:
        return validate_document(cls, data, path)


def validate_document(model: type[ModelT], data: dict[str, Any], path: Path) -> ModelT:
    """Validate a parsed state file; a mismatch names the file and the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise StateCorruptError(
            f"state file {path} is invalid at {field}: {error['msg']}; it was left untouched"
        ) from None
