"""A tasks.yaml that is not YAML is named by its line and column in the PLAN gate's reason."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import DESCRIPTION, ITEM, cli, item_file, make_team_repo, team_script

BROKEN = (
    "tasks:\n"
    "  - id: T1\n"
    "    title: Limit: five attempts\n"
    "    dependencies: []\n"
    '    acceptance_checks: ["cmd: true"]\n'
    '    done_when: ["limited"]\n'
)


def test_tasks_yaml_error_names_line_and_column(tmp_path: Path) -> None:
    script = team_script()
    script["planner"]["plan"] = [{"write": {item_file("tasks.yaml"): BROKEN}}]
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    result = cli(root, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert result.returncode == 4, result.stdout + result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("phasegate: error:")]
    assert (
        "tasks.yaml is not valid: it is not valid YAML (line 3, column 17): "
        "mapping values are not allowed here"
    ) in line, line
