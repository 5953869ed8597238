"""acceptance.json and the tasks' acceptance_checks / done_when are SpecAgent's and the
Planner's: a later agent that rewrites them has its change put back and its call fails."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from team_helpers import (
    ACCEPTANCE,
    DESCRIPTION,
    ITEM,
    LIMIT_BROKEN,
    SESSION,
    cli,
    item_file,
    journal,
    make_team_repo,
    status_json,
    task_entries,
    tasks_yaml,
    team_script,
)

ANSWERS = ("--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch")


def _run(tmp_path: Path, script: dict[str, Any]) -> tuple[Path, Any]:
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    return root, cli(root, "run", ITEM, *ANSWERS)


def test_coder_rewriting_the_acceptance_checks_is_put_back_and_fails(tmp_path: Path) -> None:
    script = team_script()
    weakened = {"criteria": [dict(c, check="true") for c in ACCEPTANCE["criteria"]]}
    entries = task_entries()
    entries[0]["acceptance_checks"] = ["cmd: true"]
    entries[0]["done_when"] = ["always"]
    script["coder"]["code:T1"] = [
        {
            "write": {
                "src/limit.py": LIMIT_BROKEN,
                item_file("acceptance.json"): json.dumps(weakened),
                item_file("tasks.yaml"): tasks_yaml(entries, T1="implemented"),
            },
            "text": "done",
        }
    ]
    root, result = _run(tmp_path, script)
    assert result.returncode == 6, result.stdout + result.stderr
    session = root / SESSION
    assert json.loads((session / "acceptance.json").read_text()) == ACCEPTANCE
    tasks = (session / "tasks.yaml").read_text()
    assert "cmd: true" not in tasks and "always" not in tasks
    assert "limit.ok()" in tasks
    (violation,) = [e for e in journal(root) if e["event"] == "agent.violation"]
    assert violation["role"] == "coder"
    assert violation["kept"] == [
        "the acceptance criteria (.agents-work/login/acceptance.json; what it held is copied "
        "to .agents-work/login/put-back/acceptance-1.json), kept from the coder",
        "the tasks' acceptance checks (.agents-work/login/tasks.yaml: "
        "T1's acceptance_checks; T1's done_when; what it held is copied to "
        ".agents-work/login/put-back/tasks-1.yaml), kept from the coder",
    ]
    errors = [line for line in result.stderr.splitlines() if line.startswith("phasegate: error")]
    assert len(errors) == 1
    assert "phasegate's own files" not in errors[0]
    assert (
        "coder changed the acceptance criteria (.agents-work/login/acceptance.json; what it "
        "held is copied to .agents-work/login/put-back/acceptance-1.json), kept from the "
        "coder, and the tasks' acceptance checks"
    ) in errors[0]
    assert "! coder changed the acceptance criteria" in result.stderr
    assert status_json(root)["current_state"] != "DONE"


def test_the_spec_agent_writes_acceptance_json_and_the_session_reaches_done(
    tmp_path: Path,
) -> None:
    """SpecAgent writes acceptance.json (INTAKE) and the Coder marks tasks implemented
    without any of it being refused."""
    root, result = _run(tmp_path, team_script())
    assert result.returncode == 0, result.stdout + result.stderr
    assert not [e for e in journal(root) if e["event"] == "agent.violation"]
    assert status_json(root)["current_state"] == "DONE"
