"""A completed parallel foreach leaves no git clutter: its item branches and its
``refs/phasegate/ITEM/NODE/{base,merged}`` refs are removed once the merged work has
landed in the work tree; while the landing waits on a conflict, the merged ref (named in
the message) is kept (docs/workflows.md, Parallel items)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import git
from parallel_helpers import Agents, fan_repo, new_item, run, task_branches, worktrees
from test_parallel_landing import TASKS, edited_meanwhile

from phasegate.errors import BlockedError


def phasegate_refs(root: Path) -> list[str]:
    refs = git(root, "for-each-ref", "--format=%(refname)").split()
    return [ref for ref in refs if "phasegate" in ref]


def test_a_completed_parallel_run_leaves_no_branches_or_refs(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    assert run(root, Agents(delay=0.05)).status == "completed"
    assert (root / "src" / "T4.py").read_text() == "# T4\n"
    assert worktrees(root) == [] and task_branches(root) == []
    assert phasegate_refs(root) == []
    assert "phasegate" not in git(root, "branch", "-a")


def test_the_merged_ref_is_kept_until_a_landing_conflict_is_resolved(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", parallel=2)
    (root / "common.txt").write_text("line1\nline2\nline3\n")
    (root / "notes.txt").write_text("notes\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    new_item(root)
    with pytest.raises(BlockedError, match=r"refs/phasegate/fan-one/tasks/merged"):
        run(root, edited_meanwhile(root))
    assert "refs/phasegate/fan-one/tasks/merged" in phasegate_refs(root)
    (root / "common.txt").write_text("line1\nUSER\nT1\nline3\n")
    assert run(root, Agents(tasks=TASKS, delay=0.0)).status == "completed"
    assert phasegate_refs(root) == []
