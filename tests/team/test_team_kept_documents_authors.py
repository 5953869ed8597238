"""What is kept from other agents stays editable by those it belongs to: SpecAgent's
correction at APPROVE_DESIGN may change acceptance.json, and a person's edits between
runs (to acceptance.json and to tasks.yaml's checks) are kept, not put back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from team_helpers import (
    ACCEPTANCE,
    DESCRIPTION,
    ITEM,
    SESSION,
    SPEC_V2,
    cli,
    item_file,
    journal,
    make_team_repo,
    status_json,
    task_entries,
    tasks_yaml,
    team_script,
)

CORRECTED = {
    "criteria": [
        dict(ACCEPTANCE["criteria"][0], description="the 6th attempt within a minute is refused"),
        ACCEPTANCE["criteria"][1],
    ]
}


def _repo(tmp_path: Path, script: dict) -> Path:
    repo = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    return repo


def test_spec_agent_correction_may_change_acceptance_json(tmp_path: Path) -> None:
    script = team_script()
    script["spec-agent"]["correct-spec"] = [
        {
            "write": {
                item_file("spec.md"): SPEC_V2,
                item_file("acceptance.json"): json.dumps(CORRECTED),
            },
            "text": "said 5, reworded AC-1",
        }
    ]
    repo = _repo(tmp_path, script)
    assert cli(repo, "run", ITEM).returncode == 3
    asked = "changes-requested: the spec must say 5"
    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", asked).returncode == 0
    again = cli(repo, "run", ITEM)
    assert again.returncode == 3, again.stdout + again.stderr
    assert not [e for e in journal(repo) if e["event"] == "agent.violation"]
    assert json.loads((repo / SESSION / "acceptance.json").read_text()) == CORRECTED
    finished = cli(
        repo,
        "run",
        ITEM,
        "--answer",
        "UD-APPROVE-DESIGN=approved",
        "--answer",
        "UD-REVIEW-STRATEGY=per-batch",
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert json.loads((repo / SESSION / "acceptance.json").read_text()) == CORRECTED
    assert status_json(repo)["current_state"] == "DONE"


def test_a_persons_edits_between_runs_are_kept(tmp_path: Path) -> None:
    script = team_script()
    # The Coder rewrites tasks.yaml as it finds it: with the person's done_when.
    entries = task_entries()
    entries[0]["done_when"] = ["the 6th try is refused"]
    script["coder"]["code:T1"][0]["write"][item_file("tasks.yaml")] = tasks_yaml(
        entries, T1="implemented"
    )
    script["coder"]["code:T2"][0]["write"][item_file("tasks.yaml")] = tasks_yaml(
        entries, T1="completed", T2="implemented"
    )
    repo = _repo(tmp_path, script)
    assert cli(repo, "run", ITEM).returncode == 3  # waits at UD-APPROVE-DESIGN
    acceptance = repo / SESSION / "acceptance.json"
    acceptance.write_text(json.dumps(CORRECTED))
    to_strategy = cli(repo, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert to_strategy.returncode == 3, to_strategy.stdout + to_strategy.stderr
    tasks = repo / SESSION / "tasks.yaml"
    edited = tasks.read_text().replace("the 6th attempt is refused", "the 6th try is refused")
    assert edited != tasks.read_text()
    tasks.write_text(edited)
    finished = cli(repo, "run", ITEM, "--answer", "UD-REVIEW-STRATEGY=per-batch")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert not [e for e in journal(repo) if e["event"] == "agent.violation"]
    assert json.loads(acceptance.read_text()) == CORRECTED
    assert "the 6th try is refused" in tasks.read_text()
