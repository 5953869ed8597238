"""An item that ended blocked (a merge conflict its workflow maps to an end node with
`status: blocked`) has ended like a completed one: `phasegate status` lists the worktrees
its parallel items left, and `phasegate worktree remove ITEM` removes them without
--force (no next run resumes them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run, task_branches, worktrees

from phasegate.errors import BlockedError

CONFLICT = "    conflicts: {attempts: 0, then: outcome}\n    on: {merge-conflict: broken}\n"
BROKEN = "  - id: broken\n    kind: end\n    status: blocked\n    message: the tasks conflict\n"


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


def test_worktrees_left_by_an_item_that_ended_blocked_are_listed_and_removed(
    tmp_path: Path,
) -> None:
    root = fan_repo(tmp_path / "repo", extra=CONFLICT)
    workflow = root / ".phasegate" / "workflows" / "fan.yaml"
    workflow.write_text(workflow.read_text() + BROKEN)
    subprocess.run(["git", "commit", "-qam", "blocked end"], cwd=root, check=True)
    new_item(root)
    agents = Agents(
        delay=0.0,
        files={"T1": {"src/shared.py": "RATE = 1\n"}, "T2": {"src/shared.py": "RATE = 2\n"}},
    )
    with pytest.raises(BlockedError, match="the tasks conflict"):
        run(root, agents)
    assert worktrees(root), "the conflict's worktrees are kept"

    status = phasegate(root, "status", ITEM)
    assert status.returncode == 0, status.stderr
    assert f"remove them: phasegate worktree remove {ITEM}" in status.stdout, status.stdout

    assert "Ended blocked at broken" in status.stdout, status.stdout
    removed = phasegate(root, "worktree", "remove", ITEM)
    assert removed.returncode == 0, removed.stderr
    assert worktrees(root) == [] and task_branches(root) == []
