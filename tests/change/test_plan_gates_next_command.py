"""A change the challenger REJECTED waits for a person to edit its plan: `phasegate status`,
its pending decision and the SessionStart hook name what `plan` said (edit the plan by
hand, then `phasegate plan ID --rechallenge`), not a bare `phasegate answer` that would
challenge the rejected plan again unchanged. At the planning limit they name `plan`'s own
answer (`phasegate plan ID --on-limit ...`), as `plan` and `change status` do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from change_helpers import REJECTED, ChangeAgents, changes
from test_change_cli import _at_the_planning_limit

from cli_process import run_cli
from phasegate.change import PlanOptions

NEXT = (
    "edit the plan by hand, then phasegate plan add-oauth --rechallenge "
    "(the challenger's verdict is at the end of proposal.md)"
)


def _rejected(repo: Path) -> None:
    agents = ChangeAgents(repo, challenges=[REJECTED])
    outcome = changes(repo).plan(
        "add-oauth",
        backends={"default": agents.backend()},
        options=PlanOptions(description="Add OAuth login"),
    )
    assert outcome.action == "rejected", outcome.message


def test_status_names_the_edit_and_rechallenge(repo: Path) -> None:
    _rejected(repo)
    data = json.loads(run_cli(repo, "status", "add-oauth", "--json").stdout)
    assert data["nextCommand"] == NEXT, data["nextCommand"]
    assert [d["command"] for d in data["pendingDecisions"]] == [NEXT], data["pendingDecisions"]
    shown = run_cli(repo, "status", "add-oauth").stdout
    assert f"Next: {NEXT}" in shown, shown
    listed = json.loads(run_cli(repo, "change", "status", "add-oauth", "--json").stdout)
    assert listed["next"] == NEXT, listed


def test_the_session_hook_names_the_edit_and_rechallenge(repo: Path) -> None:
    _rejected(repo)
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"- Next command: {NEXT}" in text, text
    assert "phasegate answer add-oauth rechallenge" not in text, text


def test_status_at_the_planning_limit_names_plans_answer(repo: Path) -> None:
    _at_the_planning_limit(repo)
    data = json.loads(run_cli(repo, "status", "add-oauth", "--json").stdout)
    listed = json.loads(run_cli(repo, "change", "status", "add-oauth", "--json").stdout)
    assert listed["next"].startswith("phasegate plan add-oauth --on-limit "), listed
    assert data["nextCommand"] == listed["next"], (data["nextCommand"], listed["next"])
    assert [d["command"] for d in data["pendingDecisions"]] == [listed["next"]]
