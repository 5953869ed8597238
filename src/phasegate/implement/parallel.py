"""The implement workflow's tasks running at once, each in its own git worktree.

A phase's parallel tasks run in worktrees of their own (the engine's parallel
``foreach``); their work is merged back in plan order when the phase's tasks
are done. PLAN.md is phasegate's alone: it is ticked in the work tree, where
the person sees it, and a change an agent makes to it in a worktree is undone
before the task's work is committed, so tasks ticked on adjacent lines never
conflict as they are merged.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from phasegate.engine.plugin_api import PluginContext, Predicate
from phasegate.implement import cycles
from phasegate.implement.where import plan_rel
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
    try:
        now: bytes | None = target.read_bytes()
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        now, mode = None, None
    if now == before:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, before)
    if mode is not None:
        os.chmod(target, mode)
    ctx.record(
        "implement.plan_restored",
        task=ctx.task.key,
        plan=rel,
        worktree=_shown(ctx.workspace, ctx.repo),
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
