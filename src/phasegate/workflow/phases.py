"""The ``phases:`` shorthand: a linear list of agent phases, converted to a node graph.

Many workflows are a straight line of phases, each an executor with one
approval reviewer. They can be written as ``phases:`` instead of ``nodes:``;
each phase is an agent node whose ``pass`` goes to the next phase (or the ones
``next`` names), ``kind: finish`` is the ``finish`` action, and an end node
closes the graph. The shorthand is validated with its own field names and
messages (``phases[1].next[0]: unknown phase 'x'``) before it is converted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from phasegate.workflow.node_rules import mode_problems, unknown_role, writing_reviewer
from phasegate.workflow.parts import (
    NAME_PATTERN,
    CheckRef,
    Label,
    Mode,
    Prerequisites,
    Role,
    Strict,
    check_name,
)

Location = tuple[str | int, ...]
Problem = tuple[Location, str]

#: The id of the end node a converted phase list finishes with.
END_ID = "end"


class Phase(Strict):
    """One phase of a linear workflow."""

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
    checks: tuple[CheckRef, ...] = ()
    next: tuple[str, ...] | None = None
    final: bool = False

    _name = field_validator("name")(check_name)

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


class LinearWorkflow(Strict):
    """A workflow written with ``phases:``."""

    name: str
    description: str = ""
    items_dir: str = "work"
    view: Any = None
    state_file: str = "state.json"
    state_format: Literal["json", "yaml"] = "json"
    history_file: str = ".review-history.md"
    journal_file: str = ".journal.jsonl"
    default_mode: str = "standard"
    partial: Literal["ask", "continue"] = "ask"
    allow_no_review: bool = True
    modes: dict[str, Mode]
    roles: dict[str, Role]
    labels: dict[str, Label] = Field(default_factory=dict)
    phases: tuple[Phase, ...] = Field(min_length=1)

    _name = field_validator("name")(check_name)

    @field_validator("modes", "roles")
    @classmethod
    def _names_valid(cls, value: dict[str, object]) -> dict[str, object]:
        for key in value:
            check_name(key)
        return value

    @field_validator("items_dir")
    @classmethod
    def _items_dir_relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError(f"{value!r} must be a path inside the repository")
        return value

    @property
    def phase_names(self) -> list[str]:
        return [p.name for p in self.phases]

    def phase(self, name: str) -> Phase:
        return next(p for p in self.phases if p.name == name)

    def successors(self, phase: Phase) -> tuple[str, ...]:
        if phase.final:
            return ()
        if phase.next is not None:
            return phase.next
        index = self.phase_names.index(phase.name)
        return (self.phases[index + 1].name,) if index + 1 < len(self.phases) else ()

    def is_final(self, phase: Phase) -> bool:
        return phase.final or not self.successors(phase)


# -- checks, with the linear format's own names and messages -----------------------------


def linear_problems(workflow: LinearWorkflow) -> list[Problem]:
    """Every rule a phase list breaks, in document order."""
    problems = _duplicates(workflow)
    if problems:
        return problems
    problems += _references(workflow)
    if not problems:
        problems += _reachability(workflow)
    return problems


def _duplicates(workflow: LinearWorkflow) -> list[Problem]:
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    for index, phase in enumerate(workflow.phases):
        if phase.name in seen:
            problems.append(
                (
                    ("phases", index, "name"),
                    f"duplicate phase name {phase.name!r} (also phases[{seen[phase.name]}])",
                )
            )
        seen.setdefault(phase.name, index)
    return problems


def _references(workflow: LinearWorkflow) -> list[Problem]:
    problems: list[Problem] = []
    names = set(workflow.phase_names)
    known = ", ".join(workflow.phase_names)
    produced = {p.artifact for p in workflow.phases if p.artifact}
    written = "default_mode" in workflow.model_fields_set
    problems += mode_problems(workflow.default_mode, list(workflow.modes), written)
    for mode_name, mode in workflow.modes.items():
        for index, skipped in enumerate(mode.skip):
            where: Location = ("modes", mode_name, "skip", index)
            if skipped not in names:
                problems.append((where, f"unknown phase {skipped!r} (phases: {known})"))
            elif skipped == workflow.phases[0].name:
                problems.append((where, "a mode cannot skip the first phase"))
    for index, phase in enumerate(workflow.phases):
        at: Location = ("phases", index)
        for position, target in enumerate(phase.next or ()):
            if target not in names:
                problems.append(
                    ((*at, "next", position), f"unknown phase {target!r} (phases: {known})")
                )
        for field in ("executor", "reviewer"):
            role = getattr(phase, field)
            if role is None:
                continue
            if role not in workflow.roles:
                problems.append(((*at, field), unknown_role(role, workflow.roles)))
            elif field == "reviewer" and workflow.roles[role].access != "read-only":
                problems.append(((*at, field), writing_reviewer(role)))
        problems += _files(phase.inputs, (*at, "inputs"), produced)
        problems += _files(phase.prerequisites.hard, (*at, "prerequisites", "hard"), produced)
        problems += _files(phase.prerequisites.soft, (*at, "prerequisites", "soft"), produced)
        if phase.previous is not None and phase.previous not in produced:
            problems.append(
                ((*at, "previous"), f"{phase.previous!r} is not an artifact of any phase")
            )
    problems += _skipped_producers(workflow)
    return problems


def _files(files: Iterable[str], where: Location, produced: set[str]) -> list[Problem]:
    return [
        (
            (*where, position),
            f"{name!r} is not an artifact of any phase "
            f"(artifacts: {', '.join(sorted(produced)) or 'none'})",
        )
        for position, name in enumerate(files)
        if name not in produced
    ]


def _skipped_producers(workflow: LinearWorkflow) -> list[Problem]:
    problems: list[Problem] = []
    for mode_name, mode in workflow.modes.items():
        skipped = set(mode.skip)
        for phase in workflow.phases:
            if phase.name in skipped:
                continue
            for needed in phase.prerequisites.hard:
                producers = [p.name for p in workflow.phases if p.artifact == needed]
                if producers and skipped.issuperset(producers):
                    problems.append(
                        (
                            ("modes", mode_name, "skip", mode.skip.index(producers[0])),
                            f"mode {mode_name!r} skips {', '.join(producers)}, which produces "
                            f"{needed!r}, a hard prerequisite of {phase.name!r}",
                        )
                    )
    return problems


def _reachability(workflow: LinearWorkflow) -> list[Problem]:
    problems: list[Problem] = []
    edges = {p.name: workflow.successors(p) for p in workflow.phases}
    first = workflow.phases[0].name
    reachable = _closure([first], edges)
    for index, phase in enumerate(workflow.phases):
        if phase.name not in reachable:
            problems.append(
                (
                    ("phases", index, "name"),
                    f"phase {phase.name!r} is unreachable from the first phase {first!r}",
                )
            )
    finals = {p.name for p in workflow.phases if workflow.is_final(p)}
    for index, phase in enumerate(workflow.phases):
        if not (_closure([phase.name], edges) & finals):
            problems.append(
                (
                    ("phases", index, "next"),
                    f"phase {phase.name!r} has no way to finish (no final phase is reachable)",
                )
            )
    return problems


def _closure(start: list[str], edges: dict[str, tuple[str, ...]]) -> set[str]:
    seen: set[str] = set()
    stack = list(start)
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(edges.get(name, ()))
    return seen


# -- conversion to nodes ------------------------------------------------------------------


def to_nodes(workflow: LinearWorkflow) -> dict[str, Any]:
    """The ``nodes:`` document equivalent to a validated phase list."""
    end = END_ID
    while end in workflow.phase_names or not NAME_PATTERN.match(end):
        end += "-node"
    nodes: list[dict[str, Any]] = []
    for phase in workflow.phases:
        successors = workflow.successors(phase)
        target = successors[0] if successors else end
        if phase.kind == "finish":
            nodes.append(
                {
                    "id": phase.name,
                    "kind": "action",
                    "action": "finish",
                    "description": phase.description,
                    "prerequisites": phase.prerequisites.model_dump(),
                    "on": {"done": target},
                }
            )
            continue
        node: dict[str, Any] = {
            "id": phase.name,
            "description": phase.description,
            "executor": phase.executor,
            "prompt": phase.executor_prompt or f"{phase.name}.md",
            "inputs": list(phase.inputs),
            "previous": phase.previous,
            "previous_required": phase.previous_required,
            "outputs": [phase.artifact] if phase.artifact else [],
            "reviews_code": phase.reviews_code,
            "checks": [c if isinstance(c, str) else c.model_dump() for c in phase.checks],
            "expectations": phase.expectations,
            "prerequisites": phase.prerequisites.model_dump(),
            "on": {"pass": target},
            "also": list(successors[1:]),
        }
        if phase.reviewer:
            node["reviewer"] = phase.reviewer
            node["reviewer_prompt"] = phase.reviewer_prompt or f"{phase.reviewer}.md"
        nodes.append(node)
    nodes.append({"id": end, "kind": "end"})
    document: dict[str, Any] = {
        "name": workflow.name,
        "description": workflow.description,
        "items_dir": workflow.items_dir,
        "journal_file": workflow.journal_file,
        "default_mode": workflow.default_mode,
        "partial": workflow.partial,
        "allow_no_review": workflow.allow_no_review,
        "modes": {k: v.model_dump() for k, v in workflow.modes.items()},
        "roles": {k: v.model_dump() for k, v in workflow.roles.items()},
        "labels": {k: v.model_dump() for k, v in workflow.labels.items()},
        "nodes": nodes,
    }
    view: dict[str, Any] = {"plugin": "feature"}
    if workflow.view is not None:
        view = {"plugin": workflow.view} if isinstance(workflow.view, str) else dict(workflow.view)
    settings = {
        "state_file": workflow.state_file,
        "state_format": workflow.state_format,
        "history_file": workflow.history_file,
    }
    view["with"] = {**settings, **view.get("with", {})}
    document["view"] = view
    return document


_TOP_LEVEL_VIEW_SETTINGS = frozenset({"state_file", "state_format", "history_file"})


def node_location(loc: Location) -> Location:
    """Where a problem found in the converted graph lies in the phase list."""
    if len(loc) == 3 and loc[:2] == ("view", "with") and loc[2] in _TOP_LEVEL_VIEW_SETTINGS:
        return (loc[2],)  # state_file, history_file: written at the top level
    if len(loc) < 2 or loc[0] != "nodes":
        return loc
    index, rest = loc[1], loc[2:]
    renames = {
        "id": ("name",),
        "prompt": ("executor_prompt",),
        "outputs": ("artifact",),
        "on": ("next",),
        "also": ("next",),
    }
    if rest and isinstance(rest[0], str) and rest[0] in renames:
        return ("phases", index, *renames[rest[0]])
    return ("phases", index, *rest)
