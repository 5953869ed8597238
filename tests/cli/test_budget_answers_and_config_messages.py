"""Budget caps, answers and config errors as a user meets them: a ``budget.roles`` key that
caps nothing is refused, a tokens raise is a whole number, status shows money without float
dust, ``answer`` refuses two notes, and config errors name the key the user set."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo


def priced_script(usd: float = 0.1, tokens: int = 150) -> dict[str, Any]:
    """Every call (executor and reviewers) reports ``usd`` and ``tokens`` (input + output)."""
    script = approving_script()
    usage = {"input_tokens": tokens - 50, "output_tokens": 50}
    for replies in script["executor"].values():
        for reply in replies:
            reply.update(cost_usd=usd, usage=usage)
    script["*"]["*"][0].update(cost_usd=usd, usage=usage)
    return script


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    write_script(root, priced_script())
    assert phasegate(root, "new", "item", "-d", "Add rate limiting").returncode == 0
    return root


def configure(repo: Path, text: str) -> None:
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\n" + text)


def one_line_error(result: Any) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- budget.roles keys ------------------------------------------------------------------


def test_a_role_cap_naming_no_role_nor_agent_is_refused_before_the_run(repo: Path) -> None:
    """``budget.roles.nosuchrole`` would cap nothing: the run is refused (exit 2, one line
    naming the file and the key), and no agent was called."""
    configure(repo, "budget:\n  roles:\n    nosuchrole: {usd: 1}\n")
    line = one_line_error(phasegate(repo, "run", "item"))
    assert ".phasegate/config.yaml: budget.roles.nosuchrole: names no workflow role" in line
    assert "chain-reviewer" in line  # the roles it could name
    journal = (repo / "docs" / "features" / "item" / ".journal.jsonl").read_text()
    assert "agent.dispatched" not in journal


def test_a_workflow_role_cap_must_name_a_role_of_that_workflow(repo: Path) -> None:
    """Under ``workflows.feature.budget.roles``, implement's ``implementer`` caps nothing."""
    configure(repo, "workflows:\n  feature:\n    budget: {roles: {implementer: {usd: 1}}}\n")
    line = one_line_error(phasegate(repo, "run", "item"))
    assert "workflows.feature.budget.roles.implementer: names no workflow role" in line


def test_role_caps_naming_roles_of_the_workflows_are_accepted(repo: Path) -> None:
    """Roles of the feature workflow and of the others (implement's reviewer) are accepted;
    the chain-reviewer cap stops the run at the budget decision."""
    configure(repo, "budget:\n  roles:\n    reviewer: {usd: 5}\n    chain-reviewer: {usd: 0.15}\n")
    result = phasegate(repo, "run", "item")
    assert result.returncode == 3, result.stderr
    assert "(roles.chain-reviewer.usd)" in result.stderr


# -- budget numbers ---------------------------------------------------------------------


def test_a_tokens_raise_must_be_a_whole_number(repo: Path) -> None:
    """A tokens cap: the message reads "450 tokens are spent"; ``raise: 1.5`` is refused
    (exit 2, one line) and the decision still waits; ``raise: 100`` is taken."""
    configure(repo, "budget: {item: {tokens: 500}}\n")
    first = phasegate(repo, "run", "item")
    assert first.returncode == 3, first.stderr
    assert "is 500 tokens and 450 tokens are spent" in first.stderr
    line = one_line_error(phasegate(repo, "answer", "item", "budget", "raise: 1.5"))
    assert "must be a whole amount" in line and "'1.5'" in line
    decisions = json.loads(phasegate(repo, "decisions", "item", "--json").stdout)
    assert [d["id"] for d in decisions] == ["budget"]
    assert phasegate(repo, "answer", "item", "budget", "raise: 100").returncode == 0
    (cap,) = json.loads(phasegate(repo, "status", "item", "--json").stdout)["budget"]["caps"]
    assert (cap["raised"], cap["limit"]) == (100, 600)


def test_status_json_shows_usd_without_float_artefacts(repo: Path) -> None:
    """$0.35 raised by $0.10 is shown as 0.45 (not 0.44999999999999996)."""
    configure(repo, "budget: {item: {usd: 0.35}}\n")
    assert phasegate(repo, "run", "item").returncode == 3
    assert phasegate(repo, "answer", "item", "budget", "raise: 0.1").returncode == 0
    text = phasegate(repo, "status", "item", "--json").stdout
    (cap,) = json.loads(text)["budget"]["caps"]
    assert (cap["configured"], cap["raised"], cap["limit"]) == (0.35, 0.1, 0.45)
    assert "0.4499999" not in text


# -- answer ------------------------------------------------------------------------------


def test_answer_refuses_an_inline_note_together_with_note(repo: Path) -> None:
    """``"raise: 2" --note 3``: two notes, one would be lost: refused (exit 2) naming both."""
    configure(repo, "budget: {item: {usd: 0.35}}\n")
    assert phasegate(repo, "run", "item").returncode == 3
    line = one_line_error(phasegate(repo, "answer", "item", "budget", "raise: 2", "--note", "3"))
    assert "two notes" in line and "'2'" in line and "'3'" in line
    assert phasegate(repo, "answer", "item", "budget", "raise", "--note", "2").returncode == 0
    help_text = phasegate(repo, "answer", "--help").stdout
    assert "not together with" in " ".join(help_text.split())


# -- config messages ---------------------------------------------------------------------


def test_a_role_binary_error_names_the_roles_key(repo: Path) -> None:
    """A ``binary`` set under ``roles.executor`` is named there, not as backends.claude.binary."""
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "  default: {backend: scripted}\n",
            "  default: {backend: scripted}\n"
            "  executor: {backend: claude, binary: no-such-claude-binary}\n",
        )
    )
    result = phasegate(repo, "run", "item")
    assert result.returncode != 0
    assert "(roles.executor.binary) is not on PATH" in result.stderr
    assert "backends.claude.binary" not in result.stderr


@pytest.mark.parametrize(
    ("section", "field", "expected"),
    [
        ("roles: {default: scripted}", "roles.default", "a mapping such as {backend: claude"),
        ("budget: {roles: {reviewer: 1}}", "budget.roles.reviewer", "a mapping such as {usd:"),
    ],
)
def test_a_section_that_is_not_a_mapping_says_what_is_expected(
    tmp_path: Path, section: str, field: str, expected: str
) -> None:
    """No class name of phasegate's own: what shape is expected, naming file and field."""
    root = init_repo(tmp_path / "repo")
    (root / ".phasegate").mkdir()
    (root / ".phasegate" / "config.yaml").write_text(section + "\n")
    line = one_line_error(phasegate(root, "status"))
    assert f".phasegate/config.yaml: {field}: must be {expected}" in line
    assert "RoleBinding" not in line and "BudgetCap" not in line
