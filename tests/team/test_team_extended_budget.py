"""A repair loop extended at its exhausted decision counts against the extended budget."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    cli,
    make_team_repo,
    status_json,
    team_script,
    verdict,
)


def test_an_extended_final_review_shows_its_extended_budget(tmp_path: Path) -> None:
    script = team_script()
    script["reviewer"] = {
        "final-review": [verdict("BLOCKED", "no lockout test")],
        "*": [verdict("OK")],
    }
    repo = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    answers = ("--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch")
    assert cli(repo, "run", ITEM, *answers).returncode == 3
    first = [
        d for d in status_json(repo)["user_decisions"] if d["decision_id"] == "UD-META-FIX-REVIEW"
    ]
    assert "3 repair round(s)" in first[-1]["question"]
    assert "round 1:" in first[-1]["question"] and "round 4:" not in first[-1]["question"]
    assert cli(repo, "answer", ITEM, "UD-META-FIX-REVIEW", "different-approach").returncode == 0
    # The resumed run is stopped as it dispatches the first call of the extended loop.
    stopped = cli(repo, "run", ITEM, env={"PHASEGATE_CRASH_AT": "dispatch.before_call"})
    assert stopped.returncode != 0
    shown = cli(repo, "status", ITEM)
    # Review iteration 5 of the 4 the budget had (1 review + 3 repairs) plus 3 more.
    assert "iteration 5 of 7" in shown.stdout, shown.stdout
    progress = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    found = json.dumps(progress)
    assert '"maxIterations": 3' not in found
    assert cli(repo, "run", ITEM).returncode == 3
    again = [
        d for d in status_json(repo)["user_decisions"] if d["decision_id"] == "UD-META-FIX-REVIEW"
    ]
    question = again[-1]["question"]
    assert "6 repair round(s)" in question
    assert "round 6:" in question and "round 7:" not in question
