"""The implement workflow's tasks running at once, each in its own git worktree, and
PLAN.md kept phasegate's alone wherever a task runs.

A phase's parallel tasks run in worktrees of their own (the engine's parallel
``foreach``); their work is merged back in plan order when the phase's tasks
are done. PLAN.md is phasegate's alone: it is ticked in the work tree, where
the person sees it, once a task's work is there (a parallel task's tick waits for
the phase's merged work), and a change an agent makes to it in a worktree is undone
before the task's work is committed, so tasks ticked on adjacent lines never
conflict as they are merged. A task running in the work tree itself (a
sequential one) has the plan put back right after each executor call, before
anything reads it: an agent can neither tick, untick, add or remove tasks or
checkpoints, nor mark a task ``review: false``. The plan's copy is handed to the guard
of phasegate's own files (:class:`PlanUndo`): it is put back when the call ends even if
the run then stops for a violation, and by the next run when phasegate was killed
during the call.
"""

from __future__ import annotations

import functools
import os
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from phasegate.engine.item import WorkItem
from phasegate.engine.plugin_api import PluginContext, Predicate
from phasegate.engine.protect_cache import _Copy
from phasegate.implement import cycles
from phasegate.implement.where import AGENT_NODE, TASKS, plan_rel
from phasegate.state.atomic import atomic_write_bytes


def _blob(workdir: Path, tree: str, rel: str) -> bytes | None:
    """The file ``rel`` as tree ``tree`` holds it (``None``: not in it)."""
    out = subprocess.run(
        ["git", "-C", str(workdir), "cat-file", "blob", f"{tree}:{rel}"],
        capture_output=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return out.stdout if out.returncode == 0 else None


def restore_plan(ctx: PluginContext) -> bool:
    """In a parallel task's worktree: PLAN.md put back as it was when the task started;
    whether the task had changed it (journaled as ``implement.plan_restored``).

    Nothing happens in the work tree itself (a task running alone), where the
    plan is ticked.
    """
    if ctx.workspace is None or ctx.task is None:
        return False
    entry = cycles.peek_task(ctx.state, ctx.task.key) or {}
    tree = entry.get("_base_tree")
    if not isinstance(tree, str) or not tree:
        return False
    rel = plan_rel(ctx.state)
    before = _blob(ctx.workspace, tree, rel)
    if before is None:
        return False
    target = ctx.workspace / rel
    _, mode = _read(target)
    return _put_back(ctx, target, before, mode, _shown(ctx.workspace, ctx.repo))


#: PLAN.md as it was before a work-tree task's executor call, by plan file, task, visit and
#: cycle, with the run's state it was taken in: a retried attempt of the call in the same
#: run keeps the first copy; another run (a person may have edited the plan since) takes
#: a new one, so a plan is never put back to a copy older than the run.
_BEFORE_CALL: dict[tuple[str, str, int, int], tuple[object, bytes | None, int | None]] = {}
_BEFORE_LOCK = threading.Lock()
#: By workflow, item and task: the plan file (and its path as the item records it) and
#: the copy its executor's call in the work tree (about to run, or running) is to find
#: again (what :func:`watch_plan` hands the guard).
_CALLING: dict[tuple[str, str, str], tuple[str, str, bytes | None, int | None]] = {}


def _read(path: Path) -> tuple[bytes | None, int | None]:
    try:
        return path.read_bytes(), stat.S_IMODE(path.stat().st_mode)
    except (FileNotFoundError, IsADirectoryError):
        return None, None


def _call_key(ctx: PluginContext) -> tuple[str, str, int, int] | None:
    """Which executor call of a task running in the work tree this is (``None``: a
    parallel task's worktree, or no task)."""
    if ctx.workspace is not None or ctx.task is None:
        return None
    node = ctx.state.peek(ctx.path)
    visit, iteration = (node.visit, node.iteration) if node is not None else (0, 0)
    plan = ctx.item.workdir(ctx.state) / plan_rel(ctx.state)
    return (os.fspath(plan), ctx.task.key, visit, iteration)


def remember_plan(ctx: PluginContext) -> None:
    """Before an executor call of a task in the work tree: PLAN.md as it is, to be put back
    after the call (:func:`guard_plan`). A retried attempt of the same call keeps the copy
    taken before the first one."""
    key = _call_key(ctx)
    if key is None:
        return
    with _BEFORE_LOCK:
        known = _BEFORE_CALL.get(key)
        if known is None or known[0] is not ctx.state:
            known = _BEFORE_CALL[key] = (ctx.state, *_read(Path(key[0])))
        rel = plan_rel(ctx.state)
        _CALLING[(ctx.item.workflow.name, ctx.item.name, key[1])] = (key[0], rel, *known[1:])


def guard_plan(ctx: PluginContext) -> bool:
    """After an executor call of a task in the work tree: PLAN.md put back as it was before
    the call (a deleted one written again); whether the agent had changed it (journaled as
    ``implement.plan_restored``). Nothing happens when no copy was taken in this run."""
    if ctx.task is None:
        return False
    target = ctx.item.workdir(ctx.state) / plan_rel(ctx.state)
    with _BEFORE_LOCK:
        _CALLING.pop((ctx.item.workflow.name, ctx.item.name, ctx.task.key), None)
        mine = [k for k in _BEFORE_CALL if k[:2] == (os.fspath(target), ctx.task.key)]
        taken = [_BEFORE_CALL.pop(k) for k in mine]
    # The copy before the earliest call of this run not looked at since.
    copies = [(before, mode) for state, before, mode in taken if state is ctx.state]
    if not copies:
        return False
    before, mode = copies[0]
    if before is None:
        return False  # there was no plan before the call: the run's reading reports it
    return _put_back(ctx, target, before, mode, None)


class PlanUndo:
    """What the implement view's ``watch_node`` returns for an executor's call in the work
    tree: PLAN.md put back right after the call, as it was before it (journaled as
    ``implement.plan_restored``; the call stands), even when the run then stops for a
    violation; and the copy (``recorded``) the guard writes to disk with its record, so a
    run killed during the call has the plan put back by the next run."""

    def __init__(
        self,
        item: WorkItem,
        node: str,
        task: str,
        plan: tuple[Path, str],
        before: bytes,
        mode: int | None,
    ) -> None:
        self.item, self.node, self.task = item, node, task
        (self.target, self.rel), self.before, self.mode = plan, before, mode
        self.recorded = {
            os.fspath(self.target): _Copy("file", before, 0o644 if mode is None else mode)
        }

    def __call__(self) -> list[str]:
        record = functools.partial(self.item.record, node=self.node)
        _write_back(record, self.task, self.rel, self.target, self.before, self.mode, None)
        return []  # put back as after any executor call: not a violation


def watch_plan(item: WorkItem, node: str) -> PlanUndo | None:
    """For the call of the task agent node at ``node`` (``phases[P]/tasks[T]/implement``):
    the plan kept from it, when it is an executor's call in the work tree."""
    parts = node.split("/")
    if len(parts) != 3 or parts[2] != AGENT_NODE or not parts[1].startswith(f"{TASKS}["):
        return None
    task = parts[1][len(TASKS) + 1 : -1]
    with _BEFORE_LOCK:
        found = _CALLING.get((item.workflow.name, item.name, task))
    if found is None or found[2] is None:
        return None
    return PlanUndo(item, node, task, (Path(found[0]), found[1]), found[2], found[3])


def _put_back(
    ctx: PluginContext, target: Path, before: bytes, mode: int | None, worktree: str | None
) -> bool:
    """PLAN.md at ``target`` written back as ``before`` (with its ``mode``) if it changed;
    whether it had (journaled as ``implement.plan_restored``)."""
    assert ctx.task is not None
    return _write_back(
        ctx.record, ctx.task.key, plan_rel(ctx.state), target, before, mode, worktree
    )


def _write_back(
    record: Callable[..., object],
    task: str,
    rel: str,
    target: Path,
    before: bytes,
    mode: int | None,
    worktree: str | None,
) -> bool:
    """As :func:`_put_back`, journaled through ``record``."""
    try:
        now: bytes | None = target.read_bytes()
    except FileNotFoundError:
        now = None
    except IsADirectoryError:
        return False  # a folder in its place: the plan's reading reports it
    if now == before:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_dir() and not target.is_symlink():
        return False
    if target.is_symlink():
        target.unlink()
    atomic_write_bytes(target, before)
    if mode is not None:
        os.chmod(target, mode)
    record(
        "implement.plan_restored",
        task=task,
        plan=rel,
        worktree=worktree,
        removed=now is None,
        sync_now=True,
    )
    return True


def _shown(path: Path, repo: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    try:
        return path.relative_to(repo).as_posix()
    except ValueError:
        return str(path)


class FixWhere(Predicate):
    """Where a task paused for a fix by hand is to be fixed: its worktree when it runs in
    one (its work is merged into the work tree with the phase's), else the work tree."""

    name = "implement-fix-where"

    def __call__(self, ctx: PluginContext) -> str:
        if ctx.workspace is None:
            return "in the work tree"
        return (
            f"in its worktree {_shown(ctx.workspace, ctx.repo)} (where its agent worked; "
            "that work and your fix reach the work tree when the phase's tasks are done)"
        )


FIX_WHERE = FixWhere()
