"""Worktrees and branches a parallel foreach leaves behind once its work item has ended
(a merge conflict the workflow maps on): ``phasegate status`` lists them and ``phasegate
worktree remove ITEM`` removes them; a task worktree's name is never taken for an item's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run, task_branches, worktrees

from phasegate.errors import ExitCode

CONFLICT = "    conflicts: {attempts: 0, then: outcome}\n    on: {merge-conflict: done}\n"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, "PHASEGATE_DEBUG": ""},
    )


def test_worktrees_left_by_an_ended_item_are_listed_and_removed(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", extra=CONFLICT)
    new_item(root)
    agents = Agents(
        delay=0.0,
        files={"T1": {"src/shared.py": "RATE = 1\n"}, "T2": {"src/shared.py": "RATE = 2\n"}},
    )
    assert run(root, agents).status == "completed"
    left = worktrees(root)
    assert left, "the conflict's worktrees are kept"
    names = [Path(w).name for w in left]

    status = phasegate(root, "status", ITEM)
    assert status.returncode == 0, status.stderr
    assert f"remove them: phasegate worktree remove {ITEM}" in status.stdout
    for name in names:
        assert f".phasegate/worktrees/{name}" in status.stdout

    wrong = phasegate(root, "worktree", "remove", names[0])
    assert wrong.returncode == ExitCode.BAD_INPUT
    (line,) = wrong.stderr.strip().splitlines()
    assert "phasegate new" not in line
    assert f"is a worktree of the parallel items of work item '{ITEM}'" in line
    assert line.endswith(f"phasegate worktree remove {ITEM}")

    removed = phasegate(root, "worktree", "remove", ITEM)
    assert removed.returncode == 0, removed.stderr
    assert worktrees(root) == []
    assert task_branches(root) == []
    assert not [p for p in (root / ".phasegate" / "worktrees").iterdir() if p.is_dir()]
    assert "Left by its parallel items" not in phasegate(root, "status", ITEM).stdout
    again = phasegate(root, "worktree", "remove", ITEM)
    assert again.returncode == ExitCode.BAD_INPUT
    assert f"work item '{ITEM}' has no worktree" in again.stderr
