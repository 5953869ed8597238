"""status.json is redacted field by field: an environment variable whose value is one of
phasegate's own words (a task's status) does not rewrite that field (which would leave a
file that does not fit the schema), while free text (a task's title, a person's note) is
still masked."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    item_file,
    make_team_repo,
    status_json,
    task_entries,
    tasks_yaml,
    team_script,
)

ENV = {"LOGIN_TOKEN": "not-started"}


def test_status_json_keeps_its_own_words_and_masks_free_text(tmp_path: Path) -> None:
    script = team_script()
    entries = task_entries()
    entries[1]["title"] = "Document the not-started limit"  # free text: masked
    script["planner"]["plan"][0]["write"][item_file("tasks.yaml")] = tasks_yaml(entries)
    repo = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION, env=ENV).returncode == 0
    first = cli(repo, "run", ITEM, env=ENV)
    assert first.returncode == 3, first.stdout + first.stderr  # UD-APPROVE-DESIGN
    note = "changes-requested: say what the not-started state means"
    asked = cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", note, env=ENV)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    again = cli(repo, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved", env=ENV)
    assert again.returncode == 3, again.stdout + again.stderr  # UD-REVIEW-STRATEGY
    status = status_json(repo)
    assert [(t["title"], t["status"]) for t in status["tasks"]] == [
        ("Rate limiter", "not-started"),
        ("Document the [REDACTED] limit", "not-started"),
    ]
    history = (repo / SESSION / "approve-design-history.jsonl").read_text()
    assert "changes-requested: say what the [REDACTED] state means" in history
    shown = cli(repo, "status", ITEM, env=ENV)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    done = cli(repo, "run", ITEM, "--answer", "UD-REVIEW-STRATEGY=per-batch", env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    assert status_json(repo)["current_state"] == "DONE"
