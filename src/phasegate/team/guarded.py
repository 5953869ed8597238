"""What agents other than their authors may not change of a session's documents.

``acceptance.json`` is SpecAgent's (INTAKE, INTAKE_LEAN and its corrections at
APPROVE_DESIGN): during any other agent's call it may not change at all. In
``tasks.yaml`` (the Planner's, or SpecAgent's in lean mode) the tasks, their
``acceptance_checks`` and ``done_when`` may not change during any other agent's
call, and no task's ``status`` may become or stop being ``completed`` (nor become
``completed`` during its author's call): only phasegate marks a task completed,
once every gate of the task passed (the Coder marks it ``implemented``). What such a
call changed is put back as it was before the call, and the call fails naming it
(see :mod:`phasegate.engine.protect`). A person's edit made while the call ran cannot be
told from the agent's, so what the file held is first copied to the item's ``put-back/``
folder (``tasks-1.yaml``, ``acceptance-1.json``, then ``-2``...), named in the message.
A call of one task's node (its Coder, its reviewers) may change that task's
``status`` only: another task's status it changed is put back the same way.
The documents as they were before the call are also on disk with the guard's record
(``recorded``): a run killed during the call has them put back by the next run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from phasegate.engine.protect_cache import ABSENT, _Copy
from phasegate.engine.protect_snapshot import put_back
from phasegate.state.put_back import copied_words, keep_copy
from phasegate.team.tasks import read_tasks, set_statuses

ACCEPTANCE = "acceptance.json"
TASKS = "tasks.yaml"
#: The roles that write each document.
AUTHORS = {ACCEPTANCE: ("spec-agent",), TASKS: ("planner", "spec-agent")}


def _copy(path: Path) -> _Copy:
    try:
        if path.is_symlink():
            return _Copy("link", str(path.readlink()).encode())
        return _Copy("file", path.read_bytes(), path.stat().st_mode & 0o7777)
    except FileNotFoundError:
        return ABSENT
    except OSError:
        return _Copy("other")


def _owned_fields(path: Path) -> dict[str, Any] | None:
    """Per task id, what only its author (or phasegate) sets; ``None`` if unreadable."""
    tasks, _ = read_tasks(path)
    if not tasks:
        return None
    return {
        t.id: {
            "acceptance_checks": t.acceptance_checks,
            "done_when": t.done_when,
            "completed": t.status == "completed",
        }
        for t in tasks
    }


def _tasks_changes(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> tuple[list[str], list[str]]:
    """What changed of ``tasks.yaml``'s owned fields, in words: of the tasks and their
    checks (their author's), and of the tasks' ``completed`` status (phasegate's)."""
    if before is None:
        return [], []
    if after is None:
        return ["made unreadable"], []
    found: list[str] = []
    status: list[str] = []
    gone = [tid for tid in before if tid not in after]
    added = [tid for tid in after if tid not in before]
    if gone:
        found.append(f"removed {', '.join(gone)}")
    if added:
        found.append(f"added {', '.join(added)}")
    for tid, was in before.items():
        now = after.get(tid)
        if now is None:
            continue
        for name in ("acceptance_checks", "done_when"):
            if now[name] != was[name]:
                found.append(f"{tid}'s {name}")
        if now["completed"] and not was["completed"]:
            status.append(f"{tid}'s status set to completed")
        elif was["completed"] and not now["completed"]:
            status.append(f"{tid}'s status changed from completed")
    return found, status


class _Undo:
    """A put-back to run once the call ended, and the documents it keeps as they were when
    the call began (``recorded``: the guard writes them to disk with its record, so a run
    killed during the call has them put back by the next run, before the call is made
    again)."""

    def __init__(self, undo: Callable[[], list[str]], recorded: dict[str, _Copy]) -> None:
        self.undo = undo
        self.recorded = recorded

    def __call__(self) -> list[str]:
        return self.undo()


def watch_documents(item_dir: Path, shown: str, role: str) -> Callable[[], list[str]] | None:
    """Before a call of ``role``: what puts back, once it ended, what it may not change
    of ``acceptance.json`` and ``tasks.yaml`` in ``item_dir`` (shown as ``shown``), and
    says in words what that was and where."""
    acceptance = item_dir / ACCEPTANCE
    tasks = item_dir / TASKS
    watch_acceptance = role not in AUTHORS[ACCEPTANCE]
    watch_tasks = role not in AUTHORS[TASKS]
    acceptance_was = _copy(acceptance) if watch_acceptance else None
    tasks_was = _copy(tasks) if watch_tasks else None
    owned_was = _owned_fields(tasks) if tasks_was is not None and tasks_was.kind == "file" else None
    # The tasks' author (the Planner, SpecAgent) writes the tasks, never one completed.
    authored_was = None if watch_tasks else _copy(tasks)
    completed_was = (
        {tid for tid, f in (_owned_fields(tasks) or {}).items() if f["completed"]}
        if authored_was is not None and authored_was.kind == "file"
        else set()
    )

    def undo() -> list[str]:
        found: list[str] = []
        if acceptance_was is not None and _copy(acceptance) != acceptance_was:
            copied = copied_words(keep_copy(acceptance.parent, acceptance.name, f"{shown}/"))
            put_back(acceptance, acceptance_was)
            found.append(
                f"the acceptance criteria ({shown}/{ACCEPTANCE}{copied}), kept from the {role}"
            )
        if tasks_was is not None and tasks_was.kind == "file" and _copy(tasks) != tasks_was:
            checks, status = _tasks_changes(owned_was, _owned_fields(tasks))
            if checks and tasks_was.kind == "file" and _copy(tasks) == ABSENT:
                checks = ["deleted"]
            copied = ""
            if checks or status:
                copied = copied_words(keep_copy(tasks.parent, tasks.name, f"{shown}/"))
                put_back(tasks, tasks_was)
            if checks:
                found.append(
                    f"the tasks' acceptance checks ({shown}/{TASKS}: {'; '.join(checks)}"
                    f"{copied}), kept from the {role}"
                )
                copied = ""  # said once
            if status:
                found.append(
                    f"the tasks' completed status ({shown}/{TASKS}: {'; '.join(status)}"
                    f"{copied}), which only phasegate sets"
                )
        if authored_was is not None and _copy(tasks) != authored_was:
            made = [
                tid
                for tid, f in (_owned_fields(tasks) or {}).items()
                if f["completed"] and tid not in completed_was
            ]
            if made:
                copied = copied_words(keep_copy(tasks.parent, tasks.name, f"{shown}/"))
                put_back(tasks, authored_was)
                said = "; ".join(f"{tid}'s status set to completed" for tid in made)
                found.append(
                    f"the tasks' completed status ({shown}/{TASKS}: {said}{copied}), "
                    "which only phasegate sets"
                )
        return found

    # As the put-back above would: acceptance.json whole; tasks.yaml when it was a file
    # (another role's call), or as it was (its author's: the killed call is made again).
    kept = [(acceptance, acceptance_was), (tasks, authored_was)]
    if tasks_was is not None and tasks_was.kind == "file":
        kept.append((tasks, tasks_was))
    recorded = {str(path): copy for path, copy in kept if copy is not None and copy.kind != "other"}
    return _Undo(undo, recorded)


def watch_task_statuses(item_dir: Path, shown: str, task: str) -> Callable[[], list[str]]:
    """Before a call of task ``task``'s node (its Coder, its reviewers): what puts back,
    once it ended, the ``status`` it set of another task of ``tasks.yaml`` (a task's
    calls mark that task only; the other tasks' own calls mark them). Only those statuses
    are put back: the rest of the call's edit of ``tasks.yaml`` stays."""
    path = item_dir / TASKS
    copy = _copy(path)
    tasks, _ = read_tasks(path)
    was = {t.id: t.status for t in tasks}

    def undo() -> list[str]:
        if not was:
            return []
        now, _ = read_tasks(path)
        changed = {
            t.id: t.status for t in now if t.id != task and t.id in was and t.status != was[t.id]
        }
        if not changed or not set_statuses(path, {tid: was[tid] for tid in changed}):
            return []
        said = "; ".join(f"{tid}'s status set to {status}" for tid, status in changed.items())
        return [
            f"another task's status ({shown}/{TASKS}: {said}), which only that task's "
            f"own calls change (this call is {task}'s)"
        ]

    return _Undo(undo, {str(path): copy} if was and copy.kind == "file" else {})
