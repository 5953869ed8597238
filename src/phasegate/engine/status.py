"""Where a work item stands: phase, iterations, concerns, and the command to run next."""

from __future__ import annotations

from typing import Any

from phasegate.engine.workitem import WorkItem
from phasegate.state.item import ItemState
from phasegate.workflow.transitions import expected_next, validate_transition


def item_status(item: WorkItem, state: ItemState) -> dict[str, Any]:
    """A JSON-ready summary of ``state`` (what ``phasegate status --json`` prints)."""
    workflow = item.workflow
    limit = workflow.max_iterations(state.mode)
    completed = {n for n, r in state.phases.items() if r.completed}
    skipped = workflow.modes[state.mode].skip
    cursor = state.engine.cursor
    in_progress: dict[str, Any] | None = None
    if cursor is not None:
        in_progress = {
            "phase": cursor.phase,
            "iteration": cursor.iteration,
            "maxIterations": limit,
            "stage": cursor.stage,
        }
    next_phase: str | None = None
    blocked: str | None = None
    if state.status == "active":
        if cursor is not None:
            next_phase = cursor.phase
        else:
            names = expected_next(workflow, state.current_phase, completed, skipped)
            next_phase = names[0] if names else None
        if next_phase is not None and cursor is None:
            artifacts = {
                p.artifact: item.artifact_path(p.artifact).is_file()
                for p in workflow.phases
                if p.artifact
            }
            result = validate_transition(
                workflow,
                state.current_phase,
                next_phase,
                artifacts,
                completed=completed,
                skipped=skipped,
            )
            if result.type == "blocked":
                blocked = result.message
    phases: list[dict[str, Any]] = []
    concerns: list[dict[str, str]] = []
    for phase in workflow.phases:
        record = state.phases.get(phase.name)
        if phase.name in skipped:
            status = "skipped"
        elif record is None or not record.started:
            status = "pending"
        elif record.completed:
            status = "completed"
        else:
            status = "in-progress"
        phases.append(
            {
                "name": phase.name,
                "status": status,
                "iterations": record.iterations if record else 0,
                "review": record.review if record else None,
                "reviewerNotes": list(record.reviewer_notes) if record else [],
                "usage": record.usage.model_dump(by_alias=True) if record else None,
            }
        )
        if record is not None:
            concerns += [{"phase": phase.name, "note": n} for n in record.reviewer_notes]
    return {
        "id": state.id,
        "workflow": state.workflow,
        "description": state.description,
        "mode": state.mode,
        "status": state.status,
        "currentPhase": state.current_phase,
        "inProgress": in_progress,
        "nextPhase": next_phase,
        "blocked": blocked,
        "nextCommand": next_command(item.name, state, blocked),
        "worktree": state.worktree,
        "branch": state.branch,
        "stateFile": str(item.state_path),
        "phases": phases,
        "unresolvedConcerns": concerns,
        "usage": state.usage.model_dump(by_alias=True),
        "summary": state.summary,
    }


def next_command(name: str, state: ItemState, blocked: str | None) -> str | None:
    """The command a person (or agent) should run next, or ``None`` when done."""
    if state.status == "completed":
        return None
    if blocked:
        return f"fix the block, then: phasegate run {name}"
    return f"phasegate run {name}"
