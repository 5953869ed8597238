"""An acceptance check without a ``cmd:`` or ``manual:`` prefix is a PLAN gate problem: read
as neither, INTEGRATE would never run it, and the task would pass unchecked."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    cli,
    item_file,
    make_team_repo,
    task_entries,
    tasks_yaml,
    team_script,
)

from phasegate.team.tasks import read_tasks


def _run_with(tmp_path: Path, checks: list[str]) -> subprocess.CompletedProcess[str]:
    script = team_script()
    entries = [dict(t) for t in task_entries()]
    entries[0]["acceptance_checks"] = checks
    script["planner"]["plan"] = [{"write": {item_file("tasks.yaml"): tasks_yaml(entries)}}]
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    return cli(root, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")


def test_unprefixed_acceptance_check_fails_the_plan_gate(tmp_path: Path) -> None:
    result = _run_with(tmp_path, ["python -m pytest -q tests/test_limit.py"])
    assert result.returncode == 4, result.stdout + result.stderr
    assert (
        "task T1's acceptance check 'python -m pytest -q tests/test_limit.py' has no "
        "'cmd:' or 'manual:' prefix (write 'cmd: python -m pytest -q tests/test_limit.py' "
        "to run it at INTEGRATE)"
    ) in result.stderr


def test_empty_command_fails_the_plan_gate(tmp_path: Path) -> None:
    result = _run_with(tmp_path, ["cmd:   "])
    assert result.returncode == 4, result.stdout + result.stderr
    assert "task T1's acceptance check 'cmd:' names no command" in result.stderr


def test_prefixed_checks_pass_in_any_case(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    text = tasks_yaml(
        [
            {
                **dict(task_entries()[0]),
                "acceptance_checks": ["CMD: true", "Manual: look at it", "command: true"],
            }
        ]
    )
    path.write_text(text)
    tasks, problems = read_tasks(path)
    assert not [p for p in problems if "acceptance check" in p], problems
    assert tasks[0].commands() == ["true", "true"]
