"""After an exhausted repair loop's ``different-approach`` answer, the run's progress
says the budget the loop now has, not the one it started with."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import DESCRIPTION, ITEM, LIMIT_BROKEN, cli, make_team_repo, team_script

ANSWERS = ("--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch")


def test_fix_build_extended_shows_its_new_budget(tmp_path: Path) -> None:
    script = team_script()
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    repo = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    first = cli(repo, "run", ITEM, *ANSWERS)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "▶ INTEGRATE fix-build (mode full: up to 3 review iterations)" in first.stderr
    answered = cli(repo, "answer", ITEM, "UD-META-FIX-BUILD", "different-approach")
    assert answered.returncode == 0
    again = cli(repo, "run", ITEM)
    assert again.returncode == 3, again.stdout + again.stderr
    lines = again.stderr.splitlines()
    extended = [line for line in lines if line.startswith("▶ INTEGRATE fix-build")]
    assert extended == [
        "▶ INTEGRATE fix-build (3 more review iterations: up to 6 review iterations)"
    ], again.stderr
    # Said before the first call of the extended loop.
    assert lines.index(extended[0]) < next(
        i for i, line in enumerate(lines) if "iteration 4: coder" in line
    )
