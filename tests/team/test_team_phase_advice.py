"""A phase jump refused before the design is asked names a command that works."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from team_helpers import DESCRIPTION, ITEM, cli, dispatched, make_team_repo, status_json


def test_jump_to_plan_before_the_design_is_asked_advises_a_working_command(
    tmp_path: Path,
) -> None:
    repo = make_team_repo(tmp_path / "repo")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    jumped = cli(repo, "run", ITEM, "--phase", "PLAN", "--yes")
    assert jumped.returncode == 4, jumped.stderr
    errors = [line for line in jumped.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, jumped.stderr
    assert "UD-APPROVE-DESIGN" in errors[0] and "not asked yet" in errors[0]
    assert f"phasegate answer {ITEM} UD-APPROVE-DESIGN" not in errors[0]
    advised = f"phasegate run {ITEM} --answer UD-APPROVE-DESIGN=approved"
    assert advised in errors[0]
    assert not dispatched(repo)
    followed = cli(repo, *shlex.split(advised)[1:])
    # The gate is answered as advised; the run stops at the next gate, REVIEW_STRATEGY.
    assert followed.returncode == 3, followed.stdout + followed.stderr
    assert status_json(repo)["current_state"] == "REVIEW_STRATEGY"
    assert any(e["role"] == "planner" for e in dispatched(repo))
