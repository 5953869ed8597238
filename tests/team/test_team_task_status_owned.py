"""Only phasegate marks a task ``completed``: a Coder that writes it has it put back."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    LIMIT_OK,
    SESSION,
    cli,
    item_file,
    journal,
    make_team_repo,
    status_json,
    tasks_yaml,
    team_script,
)

from phasegate.team.tasks import task_status


def test_coder_marking_its_task_completed_is_put_back(tmp_path: Path) -> None:
    script = team_script()
    script["coder"]["code:T1"] = [
        {
            "write": {
                "src/limit.py": LIMIT_OK,
                item_file("tasks.yaml"): tasks_yaml(T1="completed"),
            },
            "text": "done",
        }
    ]
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
    assert task_status(root / SESSION / "tasks.yaml", "T1") == "not-started"
    tasks = {t["id"]: t["status"] for t in status_json(root)["tasks"]}
    assert tasks["T1"] != "completed"
    (violation,) = [e for e in journal(root) if e["event"] == "agent.violation"]
    assert violation["kept"] == [
        "the tasks' completed status (.agents-work/login/tasks.yaml: "
        "T1's status set to completed; what it held is copied to "
        ".agents-work/login/put-back/tasks-1.yaml), which only phasegate sets"
    ]
    assert "T1's status set to completed" in result.stderr
    shown = cli(root, "status", ITEM)
    (t1,) = [line for line in shown.stdout.splitlines() if "T1 Rate limiter" in line]
    # T1's state, before what its failed call said (which quotes the status it set).
    shown_state = t1.split(" — ", 1)[1].split(":", 1)[0]
    assert "completed" not in shown_state and "done" not in shown_state, t1
