"""Transition validation (seed 000, interface 1): proceed, warning, or blocked.

Hard prerequisites block (implement without spec.md, create-tasks without
plan.md); skipping phases, re-running a completed one, or a missing soft
prerequisite warns.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from phasegate.workflow.model import Workflow

TransitionType = Literal["proceed", "warning", "blocked"]


@dataclass(frozen=True)
class TransitionResult:
    """The outcome of :func:`validate_transition`."""

    type: TransitionType
    message: str | None = None

    @property
    def allowed(self) -> bool:
        return self.type != "blocked"


def expected_next(
    workflow: Workflow, current: str | None, completed: Collection[str], skipped: Collection[str]
) -> list[str]:
    """The phases that may run next in order, following mode skips."""
    if current is None:
        candidates = [workflow.phases[0].name]
    elif current not in completed:
        return [current]
    else:
        candidates = list(workflow.successors(workflow.phase(current)))
    result: list[str] = []
    seen: set[str] = set()
    while candidates:
        name = candidates.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in skipped:
            candidates.extend(workflow.successors(workflow.phase(name)))
        else:
            result.append(name)
    return result


def validate_transition(
    workflow: Workflow,
    current: str | None,
    target: str,
    artifacts: Mapping[str, bool],
    *,
    completed: Collection[str] = (),
    skipped: Collection[str] = (),
) -> TransitionResult:
    """Decide whether moving from ``current`` to ``target`` may go ahead.

    ``artifacts`` says which artifact files exist; ``completed`` lists the
    phases already completed; ``skipped`` the phases the mode skips.
    """
    phase = workflow.phase(target)
    missing_hard = [f for f in phase.prerequisites.hard if not artifacts.get(f, False)]
    if missing_hard:
        producers = [p.name for p in workflow.phases if p.artifact in missing_hard]
        hint = f"; run the {' and '.join(producers)} phase first" if producers else ""
        return TransitionResult(
            "blocked",
            f"cannot start {target}: {', '.join(missing_hard)} "
            f"{'is' if len(missing_hard) == 1 else 'are'} missing (hard prerequisite){hint}",
        )
    warnings: list[str] = []
    expected = expected_next(workflow, current, completed, skipped)
    if target not in expected:
        if target in completed:
            warnings.append(f"{target} is already complete; it will run again")
        else:
            passed = _skipped_between(workflow, target, completed, skipped)
            if passed:
                warnings.append(f"skipping {', '.join(passed)} (not completed)")
            elif current is not None and current not in completed:
                warnings.append(f"{current} is in progress and will be left incomplete")
    missing_soft = [
        f
        for f in phase.prerequisites.soft
        if not artifacts.get(f, False) and not _only_skipped_phases_produce(workflow, f, skipped)
    ]
    if missing_soft:
        warnings.append(f"{', '.join(missing_soft)} missing (soft prerequisite)")
    if warnings:
        return TransitionResult("warning", "; ".join(warnings))
    return TransitionResult("proceed")


def _skipped_between(
    workflow: Workflow, target: str, completed: Collection[str], skipped: Collection[str]
) -> list[str]:
    """Earlier phases on the way to ``target`` that were neither completed nor mode-skipped."""
    names = workflow.phase_names
    index = names.index(target)
    return [n for n in names[:index] if n not in completed and n not in skipped]


def _only_skipped_phases_produce(workflow: Workflow, name: str, skipped: Collection[str]) -> bool:
    """A file only mode-skipped phases produce is absent by choice, not by mistake."""
    producers = [p.name for p in workflow.phases if p.artifact == name]
    return bool(producers) and all(p in skipped for p in producers)
