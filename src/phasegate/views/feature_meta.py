"""What a ``.meta.json`` a person may have edited must hold to be read (seed 000's fields
and types, and modes and phases the workflow has): one that does not is not read, and the
next run writes it again from the engine state."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

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


def meta_problem(document: dict[str, Any], workflow: Any) -> str | None:
    """What makes ``document`` (a ``.meta.json`` a person may have edited) unusable: a seed
    000 field of the wrong type, or a mode or phase the workflow does not have; ``None``
    when it is fine."""
    try:
        fields = _MetaFields.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        return f"it is invalid at {field}: {error['msg']}"
    if "mode" in document and not isinstance(fields.mode, str):
        return "it is invalid at mode: it must be a mode's name"
    mode = document.get("mode")
    if mode is not None and mode not in workflow.modes:
        return f"unknown mode {mode!r} (modes of {workflow.name}: {', '.join(workflow.modes)})"
    labels = workflow.label_names
    current = document.get("currentPhase")
    if current is not None and current not in labels:
        return f"unknown currentPhase {current!r} (phases of {workflow.name}: {', '.join(labels)})"
    for name in document.get("phases") or {}:
        if name not in labels:
            return (
                f"unknown phase {name!r} under phases (phases of {workflow.name}: "
                f"{', '.join(labels)})"
            )
    return None
