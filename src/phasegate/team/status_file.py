"""``status.json``: the session's state as seed 003 names it, its schema and its reader.

phasegate writes the file from the engine state after every commit (see
:mod:`phasegate.team.view`); agents never write it. The schema is checked
whenever the file is read: a file that does not fit is reported as corrupt
(exit 5) with the field at fault, and it is never overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from phasegate.errors import StateCorruptError, os_reason

if TYPE_CHECKING:
    from phasegate.redact import Redactor

STATUS_FILE = "status.json"
HISTORY_FILE = "approve-design-history.jsonl"

WorkflowState = Literal[
    "INTAKE",
    "INTAKE_LEAN",
    "DESIGN",
    "APPROVE_DESIGN",
    "PLAN",
    "REVIEW_STRATEGY",
    "IMPLEMENT_LOOP",
    "INTEGRATE",
    "RELEASE",
    "DONE",
    "ASK_USER",
    "FIX_REVIEW",
    "FIX_TESTS",
    "FIX_SECURITY",
    "FIX_BUILD",
    "BLOCKED",
]
Strategy = Literal["per-batch", "single-final"]
STRATEGIES: tuple[str, ...] = ("per-batch", "single-final")
CorrectionStatus = Literal["none", "queued", "dispatched", "completed"]
TaskStatus = Literal["not-started", "in-progress", "implemented", "completed", "blocked"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserDecision(_Strict):
    """One ``user_decisions`` entry (CONTRACT validity rules checked)."""

    decision_id: str = Field(min_length=1)
    question: str
    choices: list[str]
    status: Literal["pending", "answered", "cancelled", "skipped"]
    answer: str | None
    answered_by: str | None = None
    asked_at: str | None
    resolved_at: str | None
    state_context: str
    resolution_reason: str | None
    visit: int = Field(ge=1)

    @model_validator(mode="after")
    def _valid_record(self) -> UserDecision:
        if self.status == "pending" and (self.answer is not None or self.resolved_at is not None):
            raise ValueError("a pending decision has no answer and no resolved_at")
        if self.status == "answered" and (not self.answer or not self.resolved_at):
            raise ValueError("an answered decision has an answer and a resolved_at")
        if self.status in ("cancelled", "skipped") and (
            not self.resolved_at or not self.resolution_reason
        ):
            raise ValueError("a cancelled decision has a resolved_at and a resolution_reason")
        return self


class CorrectionDispatch(_Strict):
    agent: str | None = None
    task_id: str | None = None
    at: str | None = None


class ApproveDesignTracking(_Strict):
    """Where the corrections of the last change request stand (resume never repeats one)."""

    correction_status: CorrectionStatus = "none"
    round: int = Field(default=0, ge=0)
    last_correction_dispatch: CorrectionDispatch = CorrectionDispatch()


class GateTracking(_Strict):
    APPROVE_DESIGN: ApproveDesignTracking = ApproveDesignTracking()


class RuntimeFlags(_Strict):
    """Whether ``.github/copilot-instructions.md`` exists, and when that was checked."""

    copilot_instructions_exists: bool
    copilot_checked_at: str


class RetryCounts(_Strict):
    FIX_REVIEW: int = Field(default=0, ge=0)
    FIX_TESTS: int = Field(default=0, ge=0)
    FIX_SECURITY: int = Field(default=0, ge=0)
    FIX_BUILD: int = Field(default=0, ge=0)


class TaskEntry(_Strict):
    id: str
    title: str
    status: TaskStatus


class Blocker(_Strict):
    reason: str
    message: str


class TeamStatus(_Strict):
    """The whole of ``status.json``."""

    session: str
    workflow: Literal["team"]
    mode: Literal["full", "lean"]
    current_state: WorkflowState
    blocker: Blocker | None = None
    review_strategy: Strategy | None = None
    user_decisions: list[UserDecision] = Field(default_factory=list)
    gate_tracking: GateTracking = GateTracking()
    runtime_flags: RuntimeFlags | None = None
    retry_counts: dict[str, RetryCounts] = Field(default_factory=dict)
    tasks: list[TaskEntry] = Field(default_factory=list)
    known_issues: list[str] = Field(default_factory=list)
    agents_run: list[str] = Field(default_factory=list)
    last_ci_result: Literal["unknown", "green", "red"] = "unknown"
    last_update: str

    def decision(self, decision_id: str) -> UserDecision | None:
        """The latest entry of ``decision_id``."""
        found = [d for d in self.user_decisions if d.decision_id == decision_id]
        return found[-1] if found else None


def parse_status(raw: bytes, path: Path) -> TeamStatus:
    """``raw`` read as status.json; StateCorruptError names the file and the field at fault."""
    hint = "it was left untouched; restore it (e.g. from git) or fix it by hand"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StateCorruptError(f"state file {path} is corrupt ({reason}); {hint}") from None
    try:
        return TeamStatus.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise StateCorruptError(
            f"state file {path} does not fit the status.json schema: {where}: {message}; {hint}"
        ) from None


def read_status(path: Path) -> TeamStatus | None:
    """status.json as it is on disk (``None`` when there is none yet)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StateCorruptError(f"state file {path} cannot be read: {os_reason(exc)}") from None
    return parse_status(raw, path)


def dump_status(status: TeamStatus, redactor: Redactor | None = None) -> bytes:
    """The file's bytes: JSON, two-space indent, fields in schema order; with ``redactor``,
    secrets masked field by field (:func:`redacted`)."""
    data = status.model_dump(mode="json")
    if redactor is not None:
        data = redacted(data, redactor)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return (text + "\n").encode()


#: status.json's (and approve-design-history.jsonl's) fields holding phasegate's own
#: words (the session's name, states, statuses, decision ids and choices, roles, task
#: ids, times): masked of token shapes only, never of environment values, so that a
#: variable holding ``not-started`` or ``approved`` cannot rewrite them (nor leave a
#: file that no longer fits the schema).
OWN_FIELDS = frozenset(
    {
        *("session", "workflow", "mode", "current_state", "review_strategy", "reason"),
        *("decision_id", "choices", "status", "answered_by", "asked_at", "resolved_at"),
        *("state_context", "correction_status", "agent", "task_id", "at", "id"),
        *("copilot_checked_at", "agents_run", "last_ci_result", "last_update"),
        "routed_to",  # of approve-design-history.jsonl's lines, redacted the same way
    }
)
#: Fields holding phasegate's word, then maybe a person's note (``changes-requested:
#: <note>``): the word is kept as it is, the note is masked as free text.
WORD_AND_NOTE = frozenset({"answer", "resolution_reason"})


def redacted(value: Any, redactor: Redactor, key: str | None = None) -> Any:
    """``value`` (status.json's data, or a part of it under ``key``) with secrets masked:
    free text (questions, titles, notes, known issues) fully, :data:`OWN_FIELDS` of token
    shapes only."""
    if isinstance(value, dict):
        return {k: redacted(v, redactor, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, redactor, key) for v in value]
    if not isinstance(value, str):
        return value
    if key in OWN_FIELDS:
        return redactor.field("status", value)  # a structural key: token shapes only
    if key in WORD_AND_NOTE:
        word, sep, note = value.partition(": ")
        return redactor.field("status", word) + (sep + redactor.text(note) if sep else "")
    return redactor.text(value)
