"""FIX_BUILD's exhausted question counts every Coder round: the loop has no first review,
so its 3 rounds are 3 repair rounds (as status.json's retry_counts says)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    LIMIT_BROKEN,
    cli,
    decision,
    make_team_repo,
    status_json,
    team_script,
)

ANSWERS = ("--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch")


def test_fix_build_exhausted_question_counts_its_three_rounds(tmp_path: Path) -> None:
    script = team_script()
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    repo = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    result = cli(repo, "run", ITEM, *ANSWERS)
    assert result.returncode == 3, result.stdout + result.stderr
    assert status_json(repo)["retry_counts"]["meta"]["FIX_BUILD"] == 3
    question = decision(repo, "UD-META-FIX-BUILD")["question"]
    assert "3 repair round(s)" in question, question
    assert "round 1:" in question and "round 3:" in question and "round 4:" not in question
    # Each failing check is named once, its command not repeated as its location.
    assert "failed with exit code 1 (at " not in question
    assert question.count("import limit") == 2  # T1:1 and AC-1
