"""A change command run in a phase it does not act on names, after "Next:", what
`phasegate status` names for that change, not only its phase's usual command: `impl ID
--review-only` after a review stop, `archive ID --resolved` after archive's conflicts,
`plan ID --on-limit ...` at the planning limit."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import FINDING, ChangeAgents, changes, plan_approved, review
from test_archive_conflict_cli import archived_a_before_b
from test_change_cli import _at_the_planning_limit

from cli_process import run_cli
from phasegate.errors import ExitCode


def _next(repo: Path, change: str) -> str:
    return str(json.loads(run_cli(repo, "status", change, "--json").stdout)["nextCommand"])


def test_after_a_review_stop(repo: Path) -> None:
    plan_approved(repo)
    agents = ChangeAgents(repo, reviews=[review("MAJOR_ISSUES", FINDING)])
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "stopped", outcome.message
    assert _next(repo, "add-oauth") == "phasegate impl add-oauth --review-only"
    refused = run_cli(repo, "archive", "add-oauth")
    assert refused.returncode == ExitCode.BLOCKED, refused.stderr
    assert refused.stderr.rstrip().endswith("Next: phasegate impl add-oauth --review-only")
    planned = run_cli(repo, "plan", "add-oauth")
    assert planned.returncode == 0, planned.stderr
    assert planned.stdout.rstrip().endswith("Next: phasegate impl add-oauth --review-only")


def test_after_an_archive_conflict(repo: Path) -> None:
    archived_a_before_b(repo)
    assert run_cli(repo, "archive", "change-b").returncode == ExitCode.BLOCKED
    wanted = _next(repo, "change-b")
    assert wanted.endswith("phasegate archive change-b --resolved"), wanted
    for command in ("impl", "plan"):
        done = run_cli(repo, command, "change-b")
        assert done.returncode == 0, done.stderr
        assert done.stdout.rstrip().endswith(f"Next: {wanted}"), done.stdout


def test_at_the_planning_limit(repo: Path) -> None:
    _at_the_planning_limit(repo)
    wanted = _next(repo, "add-oauth")
    assert wanted.startswith("phasegate plan add-oauth --on-limit "), wanted
    for command in ("impl", "archive"):
        refused = run_cli(repo, command, "add-oauth")
        assert refused.returncode == ExitCode.BLOCKED, refused.stderr
        assert refused.stderr.rstrip().endswith(f"Next: {wanted}"), refused.stderr
