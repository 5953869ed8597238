"""Where each task of a plan stands, for ``phasegate status``.

One row per task, in PLAN.md's current order: ``done`` (approved; or ``accepted`` /
``skipped`` / ``fixed by hand`` / ``ticked by hand``; a parallel task whose work is
not in the work tree yet: ``approved, waiting to merge``, its box in PLAN.md still
open), ``implementing``, ``in review`` (with the
cycle, the reviewer and the focus), ``unclear review`` (its review could not
be read as a verdict: the decision that waits), ``agent failed`` / ``agent blocked``
(its agent's call failed every attempt, or it answered ``BLOCKED:``: the decision that
waits), ``review failed`` (its reviewer's call failed every attempt: the decision that
waits), ``escalated`` (another decision
waits: the command that answers it), ``merge conflict`` (its approved work waits on a
merge conflict: the conflict's worktree, and the decision if one is asked), or
``pending``; ``interrupted`` (with what it was doing) when no run goes on any more
while an agent worked on it, ``stopped`` when that run stopped on its agent's failed
call (every attempt of it failed). A task running in a worktree of its own (a phase's
parallel tasks) names it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from phasegate.engine.state import EngineState
from phasegate.implement import cycles
from phasegate.implement.checkboxes import TICK_WAITING
from phasegate.implement.plan import Plan
from phasegate.implement.where import AGENT_NODE, PHASES, TASK_END, TASKS


def _decision(state: EngineState, key: str) -> dict[str, Any] | None:
    for decision in state.decisions.values():
        if decision.get("status") == "pending" and str(decision.get("id", "")).endswith(key):
            return decision
    return None


def _row(state: EngineState, phase: str, key: str, title: str, status: str) -> dict[str, Any]:
    row: dict[str, Any] = {"key": key, "title": title, "state": status}
    entry = cycles.peek_task(state, key) or {}
    node = state.peek(f"{PHASES}[{phase}]/{TASKS}[{key}]/{AGENT_NODE}")
    limit = int(state.data.get("max_cycles") or 3)
    if entry.get("implementer"):
        row["implementer"] = entry["implementer"]
    if status == "done":
        how = (entry.get("_outcome") or {}).get("how")
        row["state"] = how if how and how != "approved" else "done"
        waiting = entry.get(TICK_WAITING)
        if isinstance(waiting, dict):
            # Its work is in its own worktree, not in the work tree yet: PLAN.md is ticked
            # once the phase's merged work is (journaled implement.tick_waiting).
            row["state"] = f"{waiting.get('how') or how or 'approved'}, waiting to merge"
        return row
    if status != "running":
        return row
    decision = _decision(state, key)
    if decision is not None:
        # An unclear review waits for a person too, but nothing was escalated yet.
        asked = str(decision.get("id", ""))
        unclear = asked.startswith("unclear-")
        # Its agent failed every attempt, or answered BLOCKED, or its reviewer's call failed
        # every attempt: a person retries, skips or aborts it. (A run started before
        # blocked-<task> existed asks a blocked agent's task at failed-<task>.)
        failed = asked.startswith(("failed-", "blocked-"))
        how = "blocked" if node is not None and node.get("outcome") == "blocked" else "failed"
        row["state"] = (
            "unclear review"
            if unclear
            else "review failed"
            if asked.startswith("review-failed-")
            else f"agent {how}"
            if failed
            else "escalated"
        )
        row["decision"] = decision.get("id")
        row["question"] = decision.get("question")
        return row
    if node is None:
        return row
    row["cycle"], row["maxCycles"] = node.iteration, limit
    if node.stage.startswith("review"):
        selected = (node.get("selected") or {}).get(f"{node.iteration}:reviewer") or {}
        row["state"] = "in review"
        row["reviewer"] = selected.get("role")
        row["focus"] = list(selected.get("focus") or [])
    else:
        row["state"] = "implementing"
    return row


def _conflict(
    item: Any, state: EngineState, fanout: dict[str, Any], key: str, row: dict[str, Any]
) -> None:
    """A task whose work waits on a merge conflict not resolved yet: its row says so,
    naming the conflict's worktree, its files and the decision that waits (if asked)."""
    for record in (fanout.get("conflicts") or {}).values():
        if record.get("owner") != key or record.get("commit"):
            continue
        where = str(record.get("worktree") or "")
        with contextlib.suppress(AttributeError, ValueError):
            where = Path(where).relative_to(item.repo).as_posix()
        row["state"] = "merge conflict"
        row["worktree"] = where
        row["conflictFiles"] = list(record.get("files") or [])
        found = state.decisions.get(f"conflict-{key}")
        if found is not None and found.get("status") == "pending":
            row["decision"] = found.get("id")
            row["question"] = found.get("question")
        return


#: The states of a task an agent is working on (while a run goes on).
WORKING = ("implementing", "in review")


def stopped(rows: list[dict[str, Any]], failure: dict[str, Any] | None) -> None:
    """The row of the task whose agent call the last run stopped on (``failure``, see
    :func:`phasegate.engine.live_run.last_failure`): ``stopped``, with what it was doing
    in ``was`` and the failed call in ``failure``; the next run resumes it there."""
    node = str((failure or {}).get("node") or "")
    for row in rows:
        if row["state"] in WORKING and f"/{TASKS}[{row['key']}]/" in f"{node}/":
            row["was"] = row["state"]
            row["state"] = "stopped"
            row["failure"] = failure


def interrupted(rows: list[dict[str, Any]]) -> None:
    """The rows of tasks an agent was working on when no run goes on any more (it was
    killed, or stopped on another task): ``interrupted``, with what it was doing in
    ``was`` (its cycle, reviewer and focus kept); the next run resumes it there."""
    for row in rows:
        if row["state"] in WORKING:
            row["was"] = row["state"]
            row["state"] = "interrupted"


def task_rows(item: Any, state: EngineState, plan: Plan | None) -> list[dict[str, Any]]:
    """Every task of the plan with where it stands (phases not begun yet: from the plan)."""
    rows: list[dict[str, Any]] = []
    phases = state.peek(PHASES)
    seen: set[str] = set()
    # A task ticked in the plan is done, also before its phase's loop reaches it.
    ticked = {t.key for t in plan.tasks() if t.done} if plan is not None else set()
    if phases is not None:
        for phase in phases.get("order") or []:
            tasks = state.peek(f"{PHASES}[{phase}]/{TASKS}")
            if tasks is None:
                continue
            for key in tasks.get("order") or []:
                entry = (tasks.get("items") or {}).get(key) or {}
                if entry.get("removed") or (plan is not None and plan.task(key) is None):
                    continue  # no longer in PLAN.md: not a task of the plan any more
                status = str(entry.get("status", "pending"))
                if status == "skipped" or (status == "pending" and key in ticked):
                    status = "done"  # already ticked when the phase began, or by then
                elif status == "running" and entry.get("at") == TASK_END:
                    status = "done"  # ticked by hand while it waited: it ends there
                row = _row(state, phase, key, str(entry.get("title", "")), status)
                if status == "running" and entry.get("worktree"):
                    row["worktree"] = entry["worktree"]  # a parallel task's own worktree
                _conflict(item, state, tasks.get("fanout") or {}, key, row)
                rows.append(row)
                seen.add(key)
    if plan is not None:
        for task in plan.tasks():
            if task.checkpoint or task.key in seen:
                continue
            rows.append(
                {"key": task.key, "title": task.title, "state": "done" if task.done else "pending"}
            )
        # PLAN.md's current order: a person may have moved tasks since the run began.
        where = {task.key: index for index, task in enumerate(plan.tasks())}
        rows.sort(key=lambda row: where.get(row["key"], len(where)))
    return rows
