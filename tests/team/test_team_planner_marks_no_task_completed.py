"""The Planner writes the tasks, never one completed: a plan whose tasks are already
``completed`` would skip IMPLEMENT_LOOP (no Coder, no review). It is put back and the call
fails, as another agent's ``completed`` is."""

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
    journal,
    make_team_repo,
    tasks_yaml,
    team_script,
)


def test_planner_writing_tasks_completed_is_put_back(tmp_path: Path) -> None:
    script = team_script()
    done = tasks_yaml(T1="completed", T2="completed")
    script["planner"]["plan"] = [{"write": {item_file("tasks.yaml"): done}}]
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    result = cli(
        root,
        "run",
        ITEM,
        "--answer",
        "UD-APPROVE-DESIGN=approved",
        "--answer",
        "UD-REVIEW-STRATEGY=per-batch",
    )
    assert result.returncode == 6, result.stdout + result.stderr
    assert not (root / SESSION / "tasks.yaml").exists()  # as it was before the call
    (violation,) = [e for e in journal(root) if e["event"] == "agent.violation"]
    assert violation["kept"] == [
        "the tasks' completed status (.agents-work/login/tasks.yaml: T1's status set to "
        "completed; T2's status set to completed; what it held is copied to "
        ".agents-work/login/put-back/tasks-1.yaml), which only phasegate sets"
    ]
    assert not [e for e in dispatched(root) if e.get("role") in ("coder", "integrator")]
