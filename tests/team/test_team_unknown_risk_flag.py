"""A misspelt risk flag is a PLAN gate problem: read as no flag, it would skip the Security
gate of a task that needs it."""

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


def test_unknown_risk_flag_fails_the_plan_gate(tmp_path: Path) -> None:
    script = team_script()
    entries = [dict(t) for t in task_entries()]
    entries[0]["risk_flags"] = ["secruity"]
    script["planner"]["plan"] = [{"write": {item_file("tasks.yaml"): tasks_yaml(entries)}}]
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    result = cli(root, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert result.returncode == 4, result.stdout + result.stderr
    assert (
        "task T1 has risk flag(s) 'secruity' (each one of: security, auth, input, network, "
        "perf, breaking-change, none)"
    ) in result.stderr
