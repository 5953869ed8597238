"""``phasegate worktree remove ITEM`` removes only ITEM's worktrees: the parallel items of
an item whose name starts with ``ITEM--`` (``ITEM--more``) are that item's, not ITEM's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from parallel_helpers import Agents, fan_repo, new_item, run, worktrees

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


def test_removing_an_item_keeps_the_worktrees_of_an_item_named_after_it(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", extra=CONFLICT)
    new_item(root, "fan")
    new_item(root, "fan--two")
    agents = Agents(
        delay=0.0,
        files={"T1": {"src/shared.py": "RATE = 1\n"}, "T2": {"src/shared.py": "RATE = 2\n"}},
    )
    assert run(root, agents, "fan--two").status == "completed"
    left = worktrees(root)
    assert left, "the conflict's worktrees of fan--two are kept"

    conflict = [w for w in left if "conflict-" in w]
    assert conflict, "the conflict's worktree (no branch) is kept"
    assert "fan--two" not in phasegate(root, "status", "fan").stdout
    mine = phasegate(root, "worktree", "remove", "fan", "--force")
    assert mine.returncode == ExitCode.BAD_INPUT, mine.stdout + mine.stderr
    assert "work item 'fan' has no worktree" in mine.stderr
    assert worktrees(root) == left

    wrong = phasegate(root, "worktree", "remove", Path(conflict[0]).name)
    assert "of work item 'fan--two'" in wrong.stderr

    theirs = phasegate(root, "worktree", "remove", "fan--two")
    assert theirs.returncode == 0, theirs.stderr
    assert worktrees(root) == []
