"""Whole-workflow rules checked on load: names, references and the phase graph.

Each problem is returned as ``(location, message)`` where the location is a
tuple of keys/indices into the YAML document, so the loader can name the file,
line and field.
"""

from __future__ import annotations

from collections.abc import Iterable

from phasegate.workflow.model import Phase, Workflow

Location = tuple[str | int, ...]
Problem = tuple[Location, str]


def graph_problems(workflow: Workflow) -> list[Problem]:
    """Every rule the workflow breaks, in document order."""
    problems: list[Problem] = []
    problems += _duplicate_phases(workflow)
    if problems:
        return problems  # the graph is ambiguous; later checks would mislead
    problems += _references(workflow)
    if not problems:
        problems += _reachability(workflow)
    return problems


def _duplicate_phases(workflow: Workflow) -> list[Problem]:
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


def _produced_files(workflow: Workflow) -> set[str]:
    return {p.artifact for p in workflow.phases if p.artifact}


def _references(workflow: Workflow) -> list[Problem]:
    problems: list[Problem] = []
    names = set(workflow.phase_names)
    known = ", ".join(workflow.phase_names)
    produced = _produced_files(workflow)
    if workflow.default_mode not in workflow.modes:
        problems.append(
            (
                ("default_mode",),
                f"unknown mode {workflow.default_mode!r} (modes: {', '.join(workflow.modes)})",
            )
        )
    for mode_name, mode in workflow.modes.items():
        for index, skipped in enumerate(mode.skip):
            if skipped not in names:
                problems.append(
                    (
                        ("modes", mode_name, "skip", index),
                        f"unknown phase {skipped!r} (phases: {known})",
                    )
                )
            elif skipped == workflow.phases[0].name:
                problems.append(
                    (("modes", mode_name, "skip", index), "a mode cannot skip the first phase")
                )
    for index, phase in enumerate(workflow.phases):
        where: Location = ("phases", index)
        for position, target in enumerate(phase.next or ()):
            if target not in names:
                problems.append(
                    ((*where, "next", position), f"unknown phase {target!r} (phases: {known})")
                )
        problems += _role_problems(workflow, phase, where)
        problems += _file_problems(phase, where, produced)
    problems += _skipped_producers(workflow)
    return problems


def _skipped_producers(workflow: Workflow) -> list[Problem]:
    """A mode must not skip every producer of a hard prerequisite of a phase it runs.

    Otherwise that phase is blocked forever in the mode: a trap found only mid-run.
    """
    problems: list[Problem] = []
    for mode_name, mode in workflow.modes.items():
        skipped = set(mode.skip)
        for phase in workflow.phases:
            if phase.name in skipped:
                continue
            for needed in phase.prerequisites.hard:
                producers = [p.name for p in workflow.phases if p.artifact == needed]
                if producers and skipped.issuperset(producers):
                    index = mode.skip.index(producers[0])
                    problems.append(
                        (
                            ("modes", mode_name, "skip", index),
                            f"mode {mode_name!r} skips {', '.join(producers)}, which produces "
                            f"{needed!r}, a hard prerequisite of {phase.name!r}",
                        )
                    )
    return problems


def _role_problems(workflow: Workflow, phase: Phase, where: Location) -> list[Problem]:
    problems: list[Problem] = []
    roles = ", ".join(workflow.roles)
    for field in ("executor", "reviewer"):
        role = getattr(phase, field)
        if role is None:
            continue
        if role not in workflow.roles:
            problems.append(((*where, field), f"unknown role {role!r} (roles: {roles})"))
        elif field == "reviewer" and workflow.roles[role].access != "read-only":
            problems.append(
                ((*where, field), f"reviewer role {role!r} must be read-only (least privilege)")
            )
    return problems


def _file_problems(phase: Phase, where: Location, produced: set[str]) -> list[Problem]:
    problems: list[Problem] = []

    def check(field: Location, files: Iterable[str]) -> None:
        for position, name in enumerate(files):
            if name not in produced:
                problems.append(
                    (
                        (*where, *field, position),
                        f"{name!r} is not an artifact of any phase "
                        f"(artifacts: {', '.join(sorted(produced)) or 'none'})",
                    )
                )

    check(("inputs",), phase.inputs)
    check(("prerequisites", "hard"), phase.prerequisites.hard)
    check(("prerequisites", "soft"), phase.prerequisites.soft)
    if phase.previous is not None and phase.previous not in produced:
        problems.append(
            ((*where, "previous"), f"{phase.previous!r} is not an artifact of any phase")
        )
    return problems


def _reachability(workflow: Workflow) -> list[Problem]:
    problems: list[Problem] = []
    edges = {p.name: workflow.successors(p) for p in workflow.phases}
    reachable = _closure([workflow.phases[0].name], edges)
    for index, phase in enumerate(workflow.phases):
        if phase.name not in reachable:
            problems.append(
                (
                    ("phases", index, "name"),
                    f"phase {phase.name!r} is unreachable from the first phase "
                    f"{workflow.phases[0].name!r}",
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
        if name in seen:
            continue
        seen.add(name)
        stack.extend(edges.get(name, ()))
    return seen
