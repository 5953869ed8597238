"""Budget caps as a user meets them: ``phasegate run`` stops at the cap, ``status`` shows the
spend against it, ``phasegate answer`` raises it (README "Budget caps")."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo


def priced_script() -> dict[str, Any]:
    """Every executor call reports $0.30, every review $0.10."""
    script = approving_script()
    for replies in script["executor"].values():
        for reply in replies:
            reply["cost_usd"] = 0.3
    script["*"]["*"][0]["cost_usd"] = 0.1
    return script


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repo whose scripted agents log every call they receive, with a $1 item cap."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    config = root / ".phasegate" / "config.yaml"
    text = config.read_text().replace(
        "    script: .phasegate/agents.yaml\n",
        "    script: .phasegate/agents.yaml\n    calls_log: .phasegate/calls.jsonl\n",
    )
    config.write_text(text + "\nbudget:\n  item: {usd: 1}\n")
    write_script(root, priced_script())
    assert phasegate(root, "new", "item", "-d", "Add rate limiting").returncode == 0
    return root


def received(repo: Path) -> list[tuple[str, str]]:
    """(role, phase) of every call the agents received."""
    log = repo / ".phasegate" / "calls.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [(c["role"], c["phase"]) for c in map(json.loads, lines)]


def test_cap_stops_the_run_before_the_call_then_an_answer_raises_it_and_the_run_continues(
    repo: Path,
) -> None:
    """$0.80 spent, the design executor estimated at $0.30: never dispatched, exit 3 with the
    exact answer command; ``answer item budget raise`` ($1 -> $2) lets the next run call it."""
    first = phasegate(repo, "run", "item")
    assert first.returncode == 3, first.stderr
    assert "phasegate answer item budget raise" in first.stderr
    assert received(repo)[-1] == ("chain-reviewer", "specify")
    assert ("executor", "design") not in received(repo)

    answered = phasegate(repo, "answer", "item", "budget", "raise")
    assert answered.returncode == 0, answered.stderr
    second = phasegate(repo, "run", "item")
    assert second.returncode == 3, second.stderr  # $2 is reached before implement
    assert ("executor", "design") in received(repo)
    assert ("executor", "implement") not in received(repo)

    assert phasegate(repo, "answer", "item", "budget", "raise: 1").returncode == 0
    third = phasegate(repo, "run", "item")
    assert third.returncode == 0, third.stderr
    assert received(repo)[-1] == ("final-reviewer", "verify")


def test_status_shows_spend_against_each_cap(repo: Path) -> None:
    """``status`` prints a line per cap (spend of every attempt against the cap, raises
    included); ``status --json`` has them under ``budget``."""
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text() + "  roles:\n    chain-reviewer: {usd: 0.5, tokens: 100000}\n"
    )
    assert phasegate(repo, "run", "item").returncode == 3
    shown = phasegate(repo, "status", "item")
    assert shown.returncode == 0, shown.stderr
    assert "Budget (spend of all 4 attempts):" in shown.stdout
    assert "item: $0.80 of $1.00 (80%)" in shown.stdout
    assert "role chain-reviewer: $0.20 of $0.50 (40%)" in shown.stdout
    assert "tokens" in shown.stdout and "phasegate answer item budget raise" in shown.stdout
    data = json.loads(phasegate(repo, "status", "item", "--json").stdout)
    caps = {cap["cap"]: cap for cap in data["budget"]["caps"]}
    assert set(caps) == {"roles.chain-reviewer.usd", "roles.chain-reviewer.tokens", "item.usd"}
    assert (caps["item.usd"]["spent"], caps["item.usd"]["limit"]) == (0.8, 1.0)
    assert data["budget"]["spent"]["attempts"] == 4
    assert phasegate(repo, "answer", "item", "budget", "raise: 0.5").returncode == 0
    after = json.loads(phasegate(repo, "status", "item", "--json").stdout)
    raised = {cap["cap"]: cap for cap in after["budget"]["caps"]}["item.usd"]
    assert (raised["raised"], raised["limit"]) == (0.5, 1.5)


def test_an_amount_that_is_not_a_number_is_refused_and_the_decision_stays_open(
    repo: Path,
) -> None:
    """``raise: lots`` is bad input (exit 2) and records nothing."""
    assert phasegate(repo, "run", "item").returncode == 3
    refused = phasegate(repo, "answer", "item", "budget", "raise: lots")
    assert refused.returncode == 2
    assert "must be a positive amount" in refused.stderr and "'lots'" in refused.stderr
    pending = json.loads(phasegate(repo, "decisions", "item", "--json").stdout)
    assert [d["id"] for d in pending] == ["budget"]


@pytest.mark.parametrize(
    ("budget", "field", "message"),
    [
        ("{item: {usd: -1}}", "budget.item.usd", "greater than 0"),
        ("{item: {usd: 0}}", "budget.item.usd", "greater than 0"),
        ("{item: {tokens: 2.5}}", "budget.item.tokens", "valid integer"),
        ('{item: {usd: "5$"}}', "budget.item.usd", "must be a number"),
        ("{item: {usd: yes}}", "budget.item.usd", "must be a number"),
        ("{item: {dollars: 5}}", "budget.item.dollars", "unknown field"),
        ("{items: {usd: 5}}", "budget.items", "unknown field"),
        ("{roles: {reviewer: {usd: .inf}}}", "budget.roles.reviewer.usd", "finite"),
        ("{roles: [reviewer]}", "budget.roles", "must be a mapping"),
    ],
)
def test_bad_budget_values_are_reported_with_file_and_field(
    tmp_path: Path, budget: str, field: str, message: str
) -> None:
    """A bad cap is bad input (exit 2): one line naming the file, the field and the problem."""
    root = init_repo(tmp_path / "repo")
    (root / ".phasegate").mkdir()
    (root / ".phasegate" / "config.yaml").write_text(f"budget: {budget}\n")
    result = phasegate(root, "status")
    assert result.returncode == 2
    assert f"config.yaml: {field}: " in result.stderr and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_budget_example_phasegate_init_writes_is_valid_once_uncommented(
    tmp_path: Path,
) -> None:
    """``phasegate init`` shows ``budget:`` commented out; uncommented it is a working cap."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init").returncode == 0
    config = root / ".phasegate" / "config.yaml"
    text = config.read_text()
    assert "# budget:\n#   item: {usd: 5, tokens: 2000000}\n" in text
    config.write_text(text.replace("# budget:", "budget:").replace("#   ", "  "))
    assert phasegate(root, "new", "item").returncode == 0
    data = json.loads(phasegate(root, "status", "item", "--json").stdout)
    caps = [(cap["cap"], cap["limit"]) for cap in data["budget"]["caps"]]
    assert caps == [
        ("roles.final-reviewer.usd", 1.0),
        ("item.usd", 5.0),
        ("item.tokens", 2000000.0),
    ]
