"""Parallel tasks whose work conflicts as it is merged (docs/implement-workflow.md,
Parallel tasks): a task whose work waits on the conflict is shown so, and the plan is not
implemented without it, whatever the person answered."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli, git, key
from test_implement_cli import scripted_repo

CLASHING = """# Plan: Rates

## Phase 1: Core
**Execution: Parallel**

- [ ] **Task A edits common** [`agent: the-developer`]
- [ ] **Task B edits common** [`agent: the-data-engineer`]
- [ ] **Task C new file** [`agent: the-security-engineer`]
"""
A, B = key("Task A edits common"), key("Task B edits common")
SCRIPT = {
    "the-developer": {"*": [{"write": {"common.txt": "line1\nA\nline3\n", "a.txt": "a\n"}}]},
    "the-data-engineer": {"*": [{"write": {"common.txt": "line1\nB\nline3\n", "b.txt": "b\n"}}]},
    "the-security-engineer": {"*": [{"write": {"c.txt": "c\n"}}]},
    "*": {"*": [{"text": "APPROVED\nok"}]},
}


def clashing_repo(tmp_path: Path) -> Path:
    root = scripted_repo(tmp_path, SCRIPT, plan=CLASHING)
    (root / "common.txt").write_text("line1\nline2\nline3\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "common")
    return root


def rows(root: Path) -> dict[str, dict]:
    found = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    return {row["key"]: row for row in found}


def conflict_worktree(root: Path) -> Path:
    listed = git(root, "worktree", "list", "--porcelain").splitlines()
    (where,) = [line[9:] for line in listed if line.startswith("worktree ") and "conflict-" in line]
    return Path(where)


def test_status_shows_a_task_waiting_on_its_merge_conflict(tmp_path: Path) -> None:
    """The task whose merge conflicts is not shown done: its row names the conflict's
    worktree, its files and the decision that waits, in the text and in --json."""
    root = clashing_repo(tmp_path)
    assert cli(root, "implement", "006").returncode == 3
    found = rows(root)
    # Approved, but its work reaches the work tree (and PLAN.md its tick) with the phase's.
    assert found[A]["state"] == "approved, waiting to merge"
    assert "- [ ] **Task A edits common**" in (root / PLAN).read_text()
    row = found[B]
    assert row["state"] == "merge conflict"
    assert row["decision"] == f"conflict-{B}"
    assert row["conflictFiles"] == ["common.txt"]
    where = conflict_worktree(root)
    assert row["worktree"] == where.relative_to(root.resolve()).as_posix()
    shown = cli(root, "status", "006", env={"COLUMNS": "300"}).stdout
    assert f"merge conflict (decision conflict-{B}) in {row['worktree']}" in shown


def test_stop_on_a_conflict_never_completes_without_the_task_s_work(tmp_path: Path) -> None:
    """``stop``: the run stops (exit 4) with one line naming the worktree to resolve it
    in; running again asks again instead of completing without the task's work; resolved
    there, the run completes with both tasks' work and no worktree or branch left."""
    root = clashing_repo(tmp_path)
    assert cli(root, "implement", "006").returncode == 3
    assert cli(root, "answer", "006", f"conflict-{B}", "stop").returncode == 0
    stopped = cli(root, "implement", "006")
    assert stopped.returncode == 4, stopped.stderr
    (line,) = stopped.stderr.strip().splitlines()[-1:]
    where = conflict_worktree(root)
    assert f"merging {B} stopped at a conflict in common.txt" in line
    assert f"Resolve it in {where}" in line
    again = cli(root, "run", "006")
    assert again.returncode == 3, again.stderr
    assert f"phasegate answer 006 conflict-{B}" in again.stderr
    assert rows(root)[B]["state"] == "merge conflict"
    assert not (root / "b.txt").exists()
    (where / "common.txt").write_text("line1\nA\nB\nline3\n")
    git(where, "add", "common.txt")
    assert cli(root, "answer", "006", f"conflict-{B}", "resolved").returncode == 0
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stderr
    assert (root / "common.txt").read_text() == "line1\nA\nB\nline3\n"
    assert (root / "a.txt").exists() and (root / "b.txt").exists()
    assert rows(root)[B]["state"] == "done"
    assert "- [x] **Task B edits common**" in (root / PLAN).read_text()
    assert git(root, "worktree", "list").count("\n") == 1
    assert [
        b for b in git(root, "branch", "--format=%(refname:short)").split() if b != "main"
    ] == []
