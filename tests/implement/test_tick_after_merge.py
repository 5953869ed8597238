"""A parallel task's PLAN.md checkbox is ticked once its work is in the work tree
(docs/implement-workflow.md, Parallel tasks): a task whose merge waits on a conflict is
not shown done in the plan, and a run killed before the tick leaves it to the next run."""

from __future__ import annotations

from pathlib import Path

import pytest
from implement_helpers import PLAN, cli, git
from test_parallel_tasks_conflict import B, clashing_repo, conflict_worktree

from phasegate.implement.plan import parse_plan

TITLES = ("Task A edits common", "Task B edits common", "Task C new file")


def ticked(root: Path) -> set[str]:
    plan = parse_plan((root / PLAN).read_text(), root / PLAN)
    return {t.title for t in plan.tasks() if t.done}


def resolve_by_hand(root: Path, *, answer: bool = True) -> None:
    """The conflict resolved in its worktree (and answered ``resolved`` if asked)."""
    where = conflict_worktree(root)
    (where / "common.txt").write_text("line1\nA\nB\nline3\n")
    git(where, "add", "common.txt")
    if answer:
        assert cli(root, "answer", "006", f"conflict-{B}", "resolved").returncode == 0


def test_a_task_whose_merge_conflicts_is_not_ticked_until_its_work_is_merged(
    tmp_path: Path,
) -> None:
    """Approved, but its merge meets a conflict: PLAN.md leaves it open while the conflict
    waits and after ``stop`` blocks the item; resolved and merged, the run ticks it."""
    root = clashing_repo(tmp_path)
    waiting = cli(root, "implement", "006")
    assert waiting.returncode == 3, waiting.stderr
    assert "Task B edits common" not in ticked(root)
    assert "- [ ] **Task B edits common**" in (root / PLAN).read_text()
    assert cli(root, "answer", "006", f"conflict-{B}", "stop").returncode == 0
    stopped = cli(root, "implement", "006")
    assert stopped.returncode == 4, stopped.stderr
    assert "Task B edits common" not in ticked(root)
    resolve_by_hand(root, answer=False)
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stderr
    assert ticked(root) == set(TITLES)
    assert (root / "b.txt").exists()


@pytest.mark.parametrize("crash_at", ["fanout.conflict_resolved", "implement.tick_landed"])
def test_a_run_killed_before_the_tick_leaves_it_to_the_next_run(
    tmp_path: Path, crash_at: str
) -> None:
    """``kill -9`` once the conflict is resolved (or once the merged work is in the work
    tree) and before the checkbox is ticked: the next run ticks it, the plan ends ticked."""
    root = clashing_repo(tmp_path)
    assert cli(root, "implement", "006").returncode == 3
    resolve_by_hand(root)
    killed = cli(root, "implement", "006", env={"PHASEGATE_CRASH_AT": crash_at})
    assert killed.returncode == -9, killed.stderr
    assert "Task B edits common" not in ticked(root)
    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stderr
    assert ticked(root) == set(TITLES)
    assert (root / "common.txt").read_text() == "line1\nA\nB\nline3\n"
