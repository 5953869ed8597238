"""A parallel loop its item left unfinished (its plan phase run again while an item of the
loop had failed, and the new plan's tasks form a chain, run one at a time) leaves its
worktrees, branches and its ``refs/phasegate/ITEM/NODE/{base,merged}`` refs once the item
has completed: ``phasegate worktree remove ITEM`` removes all of them, refs included; while
the item can still run, ``--force`` keeps the refs its next run resumes from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import git
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run, task_branches, worktrees

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.errors import AgentError, ExitCode

CHAIN = "# Tasks\n\n- [ ] T1: One\n- [ ] T2: Two (after T1)\n"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "PHASEGATE_DEBUG": ""},
    )


def phasegate_refs(root: Path) -> list[str]:
    return [
        r for r in git(root, "for-each-ref", "--format=%(refname)").split() if "/phasegate" in r
    ]


def failing_t2(request: AgentRequest) -> ScriptedReply | None:
    if request.labels.get("task") == "T2":
        raise RuntimeError("boom")
    return None


def loop_left_midway(tmp_path: Path) -> Path:
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    with pytest.raises(AgentError):
        run(root, Agents(delay=0.0, special=failing_t2))
    assert phasegate_refs(root), "the loop under way keeps its refs"
    return root


def test_worktree_remove_removes_the_refs_of_a_loop_an_ended_item_left(tmp_path: Path) -> None:
    root = loop_left_midway(tmp_path)
    assert run(root, Agents(delay=0.0, tasks=CHAIN), phase="plan", yes=True).status == "phase-done"
    assert run(root, Agents(delay=0.0, tasks=CHAIN)).status == "completed"
    left = phasegate_refs(root)
    assert f"refs/phasegate/{ITEM}/tasks/base" in left

    removed = phasegate(root, "worktree", "remove", ITEM)
    assert removed.returncode == 0, removed.stderr
    assert f"refs/phasegate/{ITEM}/tasks/merged" in removed.stdout
    assert worktrees(root) == [] and task_branches(root) == []
    assert phasegate_refs(root) == []

    again = phasegate(root, "worktree", "remove", ITEM)
    assert again.returncode == ExitCode.BAD_INPUT
    assert f"work item '{ITEM}' has no worktree" in again.stderr


def test_force_on_an_item_that_can_still_run_keeps_the_loops_refs(tmp_path: Path) -> None:
    root = loop_left_midway(tmp_path)
    removed = phasegate(root, "worktree", "remove", ITEM, "--force")
    assert removed.returncode == 0, removed.stderr
    assert worktrees(root) == [] and task_branches(root) == []
    assert sorted(phasegate_refs(root)) == [
        f"refs/phasegate/{ITEM}/tasks/base",
        f"refs/phasegate/{ITEM}/tasks/merged",
    ]
    assert "refs" not in removed.stdout
    assert run(root, Agents(delay=0.0)).status == "completed"
    assert (root / "src" / "T4.py").read_text() == "# T4\n"
    assert phasegate_refs(root) == []
