"""Workflow definitions as data: the pydantic models a workflow YAML is validated against.

Field-level rules live on the models; rules about the whole graph (every
transition names a known phase, every phase is reachable, every phase can
reach a final one) live in :mod:`phasegate.workflow.graph`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


def _check_name(value: str) -> str:
    if not NAME_PATTERN.match(value):
        raise ValueError(
            f"{value!r} is not a valid name (lowercase letters, digits, '-' or '_', "
            "starting with a letter)"
        )
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Mode(_Strict):
    """A mode: how many review iterations a phase gets, and which phases it skips."""

    max_iterations: int = Field(ge=1, le=50)
    description: str = ""
    skip: tuple[str, ...] = ()


class Role(_Strict):
    """An agent role. Reviewers are read-only; executors may write in the work tree."""

    description: str = ""
    access: Literal["read-only", "write"] = "read-only"


class InlineCheck(_Strict):
    """A check command written in the workflow itself."""

    name: str
    run: str

    _name = field_validator("name")(_check_name)


class Prerequisites(_Strict):
    """Files a phase needs: ``hard`` ones block the phase, ``soft`` ones warn."""

    hard: tuple[str, ...] = ()
    soft: tuple[str, ...] = ()


class Phase(_Strict):
    """One phase of a workflow."""

    name: str
    kind: Literal["agent", "finish"] = "agent"
    description: str = ""
    artifact: str | None = None
    reviews_code: bool = False
    inputs: tuple[str, ...] = ()
    previous: str | None = None
    previous_required: bool = False
    expectations: str = ""
    executor: str | None = None
    reviewer: str | None = None
    executor_prompt: str | None = None
    reviewer_prompt: str | None = None
    prerequisites: Prerequisites = Prerequisites()
    checks: tuple[str | InlineCheck, ...] = ()
    next: tuple[str, ...] | None = None
    final: bool = False

    _name = field_validator("name")(_check_name)

    @field_validator("next", mode="before")
    @classmethod
    def _next_as_tuple(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @field_validator("artifact", "previous")
    @classmethod
    def _relative_file(cls, value: str | None) -> str | None:
        if value is not None and (value.startswith("/") or ".." in value.split("/")):
            raise ValueError(f"{value!r} must be a path inside the work item folder")
        return value

    @model_validator(mode="after")
    def _agent_needs_executor(self) -> Phase:
        if self.kind == "agent" and not self.executor:
            raise ValueError("an agent phase needs an 'executor' role")
        if self.kind == "finish" and (self.executor or self.reviewer):
            raise ValueError("a finish phase runs no agents (drop 'executor'/'reviewer')")
        if self.kind == "agent" and not self.artifact and not self.reviews_code:
            raise ValueError("an agent phase needs an 'artifact' or 'reviews_code: true'")
        return self

    @property
    def check_names(self) -> list[str]:
        return [c if isinstance(c, str) else c.name for c in self.checks]


class Workflow(_Strict):
    """A whole workflow definition."""

    name: str
    description: str = ""
    items_dir: str = "work"
    state_file: str = "state.json"
    state_format: Literal["json", "yaml"] = "json"
    history_file: str = ".review-history.md"
    journal_file: str = ".journal.jsonl"
    default_mode: str = "standard"
    #: Commands that create and run this workflow's items instead of ``phasegate
    #: new``/``run`` (the ``change`` workflow: plan, impl, archive); its state file
    #: then has the workflow's own fields, kept by code written for it.
    commands: tuple[str, ...] = ()
    modes: dict[str, Mode]
    roles: dict[str, Role]
    phases: tuple[Phase, ...] = Field(min_length=1)

    _name = field_validator("name")(_check_name)

    @field_validator("modes", "roles")
    @classmethod
    def _names_valid(cls, value: dict[str, object]) -> dict[str, object]:
        for key in value:
            _check_name(key)
        return value

    @field_validator("items_dir")
    @classmethod
    def _items_dir_relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError(f"{value!r} must be a path inside the repository")
        return value

    def phase(self, name: str) -> Phase:
        """The phase called ``name`` (KeyError if none)."""
        for phase in self.phases:
            if phase.name == name:
                return phase
        raise KeyError(name)

    @property
    def phase_names(self) -> list[str]:
        return [p.name for p in self.phases]

    def successors(self, phase: Phase) -> tuple[str, ...]:
        """Phases that may follow ``phase`` (the next one in the list by default)."""
        if phase.final:
            return ()
        if phase.next is not None:
            return phase.next
        index = self.phase_names.index(phase.name)
        if index + 1 < len(self.phases):
            return (self.phases[index + 1].name,)
        return ()

    def is_final(self, phase: Phase) -> bool:
        return phase.final or not self.successors(phase)

    def max_iterations(self, mode: str) -> int:
        return self.modes[mode].max_iterations
