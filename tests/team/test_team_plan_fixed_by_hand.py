"""After PLAN's gate failed, a tasks.yaml a person fixed by hand is used: the session goes on
from it (the Planner is not called again, the fix is not overwritten). A tasks.yaml that is
unchanged, or still has a problem, has the Planner run again."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    dispatched,
    item_file,
    make_team_repo,
    task_entries,
    tasks_yaml,
    team_script,
)


def failed_plan(tmp_path: Path) -> Path:
    """A session stopped at PLAN: the Planner's tasks.yaml names an unknown dependency."""
    script = team_script()
    bad = [dict(t) for t in task_entries()]
    bad[1]["dependencies"] = ["T9"]
    script["planner"]["plan"] = [{"write": {item_file("tasks.yaml"): tasks_yaml(bad)}}]
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    first = cli(root, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert first.returncode == 4, first.stdout + first.stderr
    assert "T2 depends on T9, which is not a task" in first.stderr
    return root


def planner_calls(root: Path) -> int:
    return len([e for e in dispatched(root) if e.get("role") == "planner"])


def test_tasks_yaml_fixed_by_hand_is_used(tmp_path: Path) -> None:
    root = failed_plan(tmp_path)
    before = planner_calls(root)
    fixed = tasks_yaml()
    (root / SESSION / "tasks.yaml").write_text(fixed)
    again = cli(root, "run", ITEM)
    assert again.returncode == 3, again.stdout + again.stderr
    assert (
        "login: .agents-work/login/tasks.yaml was changed since PLAN's gate failed and is "
        "valid now: the session goes on from it (the Planner is not called again)"
    ) in again.stderr
    assert "UD-REVIEW-STRATEGY" in again.stderr
    assert planner_calls(root) == before
    assert (root / SESSION / "tasks.yaml").read_text() == fixed


def test_tasks_yaml_still_broken_has_the_planner_run_again(tmp_path: Path) -> None:
    root = failed_plan(tmp_path)
    before = planner_calls(root)
    path = root / SESSION / "tasks.yaml"
    path.write_text(path.read_text().replace("T9", "T8"))
    again = cli(root, "run", ITEM)
    assert again.returncode == 4, again.stdout + again.stderr
    assert "was changed since PLAN's gate failed" not in again.stderr
    assert planner_calls(root) > before
