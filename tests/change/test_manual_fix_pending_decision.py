"""At the manual-fix stop, `status --json`'s pending decision names the command `status`
names next (`phasegate impl ID --review-only`), not a different `phasegate answer ...`."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import FINDING, changes, plan_approved, review

from cli_process import run_cli


def test_the_pending_manual_fix_names_the_next_command(repo: Path) -> None:
    agents = plan_approved(repo, reviews=[review("MAJOR_ISSUES", FINDING)])
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "stopped", outcome.message
    shown = run_cli(repo, "status", "add-oauth", "--json")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert status["nextCommand"] == "phasegate impl add-oauth --review-only"
    (decision,) = status["pendingDecisions"]
    assert decision["id"] == "manual-fix"
    assert decision["command"] == status["nextCommand"]
    assert decision["choices"] == ["review-only", "implement"]
