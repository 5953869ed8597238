"""A task's Coder may change that task's status only: another task's is put back."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    LIMIT_OK,
    SESSION,
    calls_at,
    cli,
    in_process,
    item_file,
    journal,
    make_team_repo,
    part,
    run_through,
    tasks_yaml,
    team_script,
)

from phasegate.team.tasks import task_status


def test_coder_marking_another_task_implemented_is_put_back(tmp_path: Path) -> None:
    script = team_script()
    script["coder"]["code:T1"] = [
        {
            "write": {
                "src/limit.py": LIMIT_OK,
                item_file("tasks.yaml"): tasks_yaml(T1="implemented", T2="implemented"),
            },
            "text": "done, and T2 as well",
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
    tasks = root / SESSION / "tasks.yaml"
    # T2's status is put back; T1's own mark stays.
    assert task_status(tasks, "T2") == "not-started"
    assert task_status(tasks, "T1") == "implemented"
    (violation,) = [e for e in journal(root) if e["event"] == "agent.violation"]
    assert violation["kept"] == [
        "another task's status (.agents-work/login/tasks.yaml: T2's status set to "
        "implemented), which only that task's own calls change (this call is T1's)"
    ]
    assert "T2's status set to implemented" in result.stderr
    assert not [e for e in journal(root) if e["event"] == "task.completed"]


def test_coder_is_told_other_tasks_status_is_not_its_own(tmp_path: Path) -> None:
    repo, agents = in_process(tmp_path / "repo", team_script())
    gates = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}
    assert run_through(repo, agents, **gates).status == "completed"
    (coder,) = calls_at(agents, "tasks[T2]/code", "coder")
    told = part(coder, "Not yours to change")
    assert "tasks.yaml: another task's status (this call is T2's)" in told, told
    (integrator,) = calls_at(agents, "integrate", "integrator")
    assert "another task's status" not in part(integrator, "Not yours to change")
