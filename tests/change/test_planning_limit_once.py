"""The planning limit answered with ``phasegate answer``: list and status advise a bare
``plan``, and one ``continue`` grants one extension, whatever ``plan`` is then given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from cli_process import run_cli
from phasegate.errors import ExitCode

PROPOSAL = "---\nchange_id: add-x\nspecs: []\n---\n# Proposal\nX.\n"
TASKS = "## 1. Data Layer\n- [ ] 1.1 do it\n"
HIGH = {
    "verdict": "NEEDS_REVISION",
    "summary": "not yet",
    "issues": [{"severity": "high", "description": "missing errors", "location": "tasks.md"}],
}


def configure(repo: Path) -> None:
    script: dict[str, Any] = {
        "proposal-author": {
            "proposal": [{"write": {"{item_dir}/proposal.md": PROPOSAL}}],
            "tasks": [{"write": {"{item_dir}/tasks.md": TASKS}}],
        },
        "challenger": {"tasks": [{"json": HIGH}]},
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


def challenges(repo: Path) -> int:
    lines = (repo / "changes/add-x/.journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return sum(
        1 for e in events if e["event"] == "agent.dispatched" and e.get("role") == "challenger"
    )


def limit_answered_continue(repo: Path) -> None:
    configure(repo)
    first = run_cli(repo, "plan", "add-x", "X", "--mode", "quick")
    assert first.returncode == ExitCode.WAITING, first.stderr
    assert challenges(repo) == 1
    answered = run_cli(repo, "answer", "add-x", "planning-limit", "continue")
    assert answered.returncode == 0, answered.stderr
    assert "Next: phasegate plan add-x" in answered.stdout


def test_list_and_status_advise_a_bare_plan_once_the_limit_is_answered(repo: Path) -> None:
    limit_answered_continue(repo)
    listed = run_cli(repo, "change", "list")
    assert listed.returncode == 0, listed.stderr
    assert "phasegate plan add-x" in listed.stdout
    assert "--on-limit" not in listed.stdout
    status = run_cli(repo, "change", "status", "add-x", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["next"] == "phasegate plan add-x"
    shown = run_cli(repo, "change", "status", "add-x")
    assert "--on-limit" not in shown.stdout


def test_on_limit_after_the_answer_grants_no_second_extension(repo: Path) -> None:
    limit_answered_continue(repo)
    again = run_cli(repo, "plan", "add-x", "--on-limit", "continue")
    assert again.returncode == ExitCode.WAITING, again.stderr
    # quick mode: one more challenge round, then the limit asks again.
    assert challenges(repo) == 2
    state = YAML(typ="safe", pure=True).load((repo / "changes/add-x/STATE.yaml").read_text())
    assert state["planning_iterations"] == 2


def test_a_bare_plan_after_the_answer_grants_one_extension(repo: Path) -> None:
    limit_answered_continue(repo)
    again = run_cli(repo, "plan", "add-x")
    assert again.returncode == ExitCode.WAITING, again.stderr
    assert challenges(repo) == 2


def test_on_limit_naming_another_choice_than_the_answer_is_refused(repo: Path) -> None:
    limit_answered_continue(repo)
    refused = run_cli(repo, "plan", "add-x", "--on-limit", "implement")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stderr
    assert "already answered continue" in refused.stderr
    assert challenges(repo) == 1
