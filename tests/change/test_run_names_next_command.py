"""`phasegate run ID` of a change that goes on refuses (its own commands run it) and names,
after "Next:", the command `phasegate status` names for it, not only the list of its
commands: `impl ID --review-only` after a review stop, `impl ID` once planned."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import FINDING, ChangeAgents, changes, plan_approved, review

from cli_process import run_cli
from phasegate.errors import ExitCode


def _next(repo: Path, change: str) -> str:
    return str(json.loads(run_cli(repo, "status", change, "--json").stdout)["nextCommand"])


def test_run_of_a_change_stopped_for_a_fix_names_impl_review_only(repo: Path) -> None:
    plan_approved(repo)
    agents = ChangeAgents(repo, reviews=[review("MAJOR_ISSUES", FINDING)])
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "stopped", outcome.message
    assert _next(repo, "add-oauth") == "phasegate impl add-oauth --review-only"
    ran = run_cli(repo, "run", "add-oauth")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert "run with its own commands" in ran.stderr
    assert ran.stderr.rstrip().endswith("Next: phasegate impl add-oauth --review-only"), ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr


def test_run_of_a_planned_change_names_impl(repo: Path) -> None:
    plan_approved(repo)
    ran = run_cli(repo, "run", "add-oauth")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert ran.stderr.rstrip().endswith(f"Next: {_next(repo, 'add-oauth')}"), ran.stderr
    assert ran.stderr.rstrip().endswith("Next: phasegate impl add-oauth"), ran.stderr
