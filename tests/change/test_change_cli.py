"""``phasegate plan / impl / archive / change`` as a user runs them: subprocesses, no terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from phasegate.errors import ExitCode

PROPOSAL = "---\nchange_id: add-oauth\nspecs: []\n---\n# Proposal\nOAuth.\n"
TASKS = "## 1. Data Layer\n- [ ] 1.1 token model\n"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ},
    )


def configure(repo: Path, verdict: dict[str, Any]) -> None:
    """Scripted agents (a YAML script, as a user would write one) answering by step."""
    script = {
        "proposal-author": {
            "proposal": [{"write": {"{item_dir}/proposal.md": PROPOSAL}}],
            "tasks": [{"write": {"{item_dir}/tasks.md": TASKS}}],
        },
        "challenger": {"tasks": [{"json": verdict}]},
    }
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
    }
    (repo / ".phasegate").mkdir(exist_ok=True)
    yaml = YAML(typ="safe", pure=True)
    for name, data in (("agents.yaml", script), ("config.yaml", config)):
        with open(repo / ".phasegate" / name, "w") as handle:
            yaml.dump(data, handle)


APPROVED = {"verdict": "APPROVED", "summary": "ok", "issues": []}


@pytest.fixture
def planned(repo: Path) -> Path:
    """A repository whose change add-oauth was planned through the CLI."""
    configure(repo, APPROVED)
    result = phasegate(repo, "plan", "add-oauth", "Add OAuth login")
    assert result.returncode == 0, result.stderr
    assert "Next: phasegate impl add-oauth" in result.stdout
    return repo


def test_help_lists_the_change_commands(repo: Path) -> None:
    """plan/impl/archive (and the change group) are discoverable in --help."""
    top = phasegate(repo, "--help").stdout
    for command in ("plan", "impl", "archive", "mcp", "change"):
        assert f"\n  {command} " in top, command
    group = phasegate(repo, "change", "--help").stdout
    for command in ("plan", "impl", "archive", "status", "list"):
        assert f"\n  {command} " in group, command


def test_workflows_lists_the_change_workflow(repo: Path) -> None:
    """The built-in change.yaml validates and is listed with its phases."""
    result = phasegate(repo, "workflows")
    assert result.returncode == 0, result.stderr
    assert "change (built-in)" in result.stdout
    phases = "proposed → rejected → challenged → implementing → complete → archived"
    assert phases in result.stdout


def test_plan_writes_state_yaml_with_the_phase(planned: Path) -> None:
    """WF-R1: STATE.yaml with the phase field; WF-R2: APPROVED -> challenged."""
    state = YAML(typ="safe", pure=True).load((planned / "changes/add-oauth/STATE.yaml").read_text())
    assert (state["change_id"], state["phase"]) == ("add-oauth", "challenged")


def test_a_command_in_the_wrong_phase_exits_4_saying_what_to_run(planned: Path) -> None:
    """WF-R1: the wrong phase is one clear line naming the phase and the next command."""
    result = phasegate(planned, "archive", "add-oauth")
    assert result.returncode == ExitCode.BLOCKED
    assert result.stderr.strip() == (
        "phasegate: error: change 'add-oauth' is in phase challenged; 'archive' acts only on "
        "complete changes. Next: phasegate impl add-oauth"
    )


def test_change_status_lists_the_changes_and_their_next_command(planned: Path) -> None:
    """phasegate change list / status: where each change stands."""
    listing = phasegate(planned, "change", "list")
    assert "add-oauth" in listing.stdout and "challenged" in listing.stdout
    status = json.loads(phasegate(planned, "change", "status", "add-oauth", "--json").stdout)
    assert (status["phase"], status["next"]) == ("challenged", "phasegate impl add-oauth")


def test_plain_status_lists_changes_beside_work_items(planned: Path) -> None:
    """`phasegate status` with no name shows every item of every workflow, changes too."""
    rows = json.loads(phasegate(planned, "status", "--json").stdout)
    (row,) = [r for r in rows if r["workflow"] == "change"]
    assert (row["id"], row["status"]) == ("add-oauth", "challenged")
    assert row["nextCommand"] == "phasegate impl add-oauth"
    table = phasegate(planned, "status").stdout
    assert "add-oauth" in table and "phasegate impl add-oauth" in table


def test_the_generic_commands_refuse_a_change(planned: Path) -> None:
    """The change workflow keeps its own state machine: new/run point to its commands."""
    run = phasegate(planned, "run", "add-oauth")
    assert run.returncode == ExitCode.BAD_INPUT
    assert "phasegate plan, phasegate impl, phasegate archive" in run.stderr
    new = phasegate(planned, "new", "other", "--workflow", "change")
    assert new.returncode == ExitCode.BAD_INPUT
    assert "whose items are created and run with its own commands" in new.stderr


def test_rejected_plan_exits_4(repo: Path) -> None:
    """WF-R2: REJECTED -> rejected, manual intervention needed."""
    configure(repo, {"verdict": "REJECTED", "summary": "wrong approach", "issues": []})
    result = phasegate(repo, "plan", "add-oauth", "Add OAuth login")
    assert result.returncode == ExitCode.BLOCKED
    assert "REJECTED by the challenger: wrong approach" in result.stderr
    assert "--rechallenge" in result.stderr


def test_the_limit_without_a_terminal_exits_3_with_the_question(repo: Path) -> None:
    """Non-interactive use never waits on stdin: exit 3 (waiting on a human), flag named."""
    minor = {
        "verdict": "NEEDS_REVISION",
        "summary": "wording",
        "issues": [{"severity": "low", "description": "typo", "location": None}],
    }
    configure(repo, minor)
    result = phasegate(repo, "plan", "add-oauth", "Add OAuth login", "--mode", "quick")
    assert result.returncode == ExitCode.WAITING
    assert "--on-limit implement or --on-limit continue" in result.stderr
    accepted = phasegate(repo, "plan", "add-oauth", "--on-limit", "implement")
    assert accepted.returncode == 0, accepted.stderr
    assert "challenged (iteration limit reached with minor issues" in accepted.stdout


def test_on_limit_continue_extends_the_budget_once(repo: Path) -> None:
    """One answer, one extension: `plan --on-limit continue` grants one more set of revision
    rounds; at the limit again the plan stops for a person (exit 3) instead of looping."""
    minor = {
        "verdict": "NEEDS_REVISION",
        "summary": "wording",
        "issues": [{"severity": "low", "description": "typo", "location": None}],
    }
    configure(repo, minor)
    first = phasegate(repo, "plan", "add-oauth", "Add OAuth login", "--mode", "quick")
    assert first.returncode == ExitCode.WAITING, first.stderr
    extended = phasegate(repo, "plan", "add-oauth", "--on-limit", "continue")
    assert extended.returncode == ExitCode.WAITING, extended.stderr
    assert "--on-limit implement or --on-limit continue" in extended.stderr
    journal = (repo / "changes/add-oauth/.journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in journal]
    challenges = [
        e for e in events if e["event"] == "agent.dispatched" and e["role"] == "challenger"
    ]
    assert len(challenges) == 2
    answered = [e for e in events if e["event"] == "decision.answered"]
    assert [(e["choice"], e["by"]) for e in answered] == [("continue", "flag")]


def test_status_of_a_change_that_does_not_exist_is_bad_input(repo: Path) -> None:
    """`change status ID` for an unknown change: one line naming it and how to create it,
    exit 2 (never an internal error), in text and in JSON."""
    for extra in ((), ("--json",)):
        result = phasegate(repo, "change", "status", "nope", *extra)
        assert result.returncode == ExitCode.BAD_INPUT
        assert "no change named 'nope'" in result.stderr
        assert 'phasegate plan nope \\"DESCRIPTION\\"' in result.stderr or (
            'phasegate plan nope "DESCRIPTION"' in result.stderr
        )
