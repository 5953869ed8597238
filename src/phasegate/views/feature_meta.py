"""What a ``.meta.json`` a person may have edited must hold (seed 000's fields and types,
and modes and phases the workflow has): anything else is a corrupt state, exit 5."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from phasegate.errors import StateCorruptError

#: The fields of ``.meta.json`` phasegate writes; any other key is a person's and is kept.
META_KEYS = frozenset(
    {
        "id",
        "workflow",
        "description",
        "mode",
        "status",
        "created",
        "completed",
        "branch",
        "worktree",
        "baseCommit",
        "currentPhase",
        "phases",
        "summary",
        "usage",
    }
)
PHASE_KEYS = frozenset(
    {
        "started",
        "completed",
        "iterations",
        "reviewerNotes",
        "verified",
        "review",
        "summary",
        "usage",
        "skipped",
    }
)


class _PhaseFields(BaseModel):
    model_config = ConfigDict(extra="allow")

    started: str | None = None
    completed: str | None = None
    iterations: int = 0
    reviewerNotes: list[str] = []
    verified: bool | None = None


class _MetaFields(BaseModel):
    model_config = ConfigDict(extra="allow")

    mode: str | None = None
    status: Literal["active", "completed"] = "active"
    currentPhase: str | None = None
    phases: dict[str, _PhaseFields] = {}


def validate_meta(document: dict[str, Any], path: Path) -> None:
    """Seed 000's fields have their types (a person may edit the file): else exit 5."""
    try:
        fields = _MetaFields.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise StateCorruptError(
            f"state file {path} is invalid at {field}: {error['msg']}; it was left untouched"
        ) from None
    if "mode" in document and not isinstance(fields.mode, str):
        raise StateCorruptError(
            f"state file {path} is invalid at mode: it must be a mode's name; it was left untouched"
        )


def check_names(document: Mapping[str, Any], path: Path, workflow: Any) -> None:
    """A mode or phase the workflow does not have (a hand edit gone wrong) is corrupt: exit 5
    before anything is written, rather than overwritten by the next render."""
    where = f"state file {path}"
    mode = document.get("mode")
    if mode is not None and mode not in workflow.modes:
        raise StateCorruptError(
            f"{where}: unknown mode {mode!r} (modes of {workflow.name}: "
            f"{', '.join(workflow.modes)}); it was left untouched"
        )
    labels = workflow.label_names
    current = document.get("currentPhase")
    if current is not None and current not in labels:
        raise StateCorruptError(
            f"{where}: unknown currentPhase {current!r} (phases of {workflow.name}: "
            f"{', '.join(labels)}); it was left untouched"
        )
    for name in document.get("phases") or {}:
        if name not in labels:
            raise StateCorruptError(
                f"{where}: unknown phase {name!r} under phases (phases of {workflow.name}: "
                f"{', '.join(labels)}); it was left untouched"
            )
