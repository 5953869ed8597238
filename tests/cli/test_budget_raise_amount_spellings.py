"""A raise's amount may be written as phasegate writes amounts: ``$2.50``, ``2.5$``,
``2.5 USD``, ``1,500 tokens``; an amount in another unit or a decimal comma is refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo


def held_repo(tmp_path: Path, cap: str) -> Path:
    """A run held at the budget question of ``cap`` (each call: $0.30, 1,000 tokens)."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    script = approving_script()
    for replies in [*script["executor"].values(), script["*"]["*"]]:
        for reply in replies:
            reply["cost_usd"] = 0.3
            reply["usage"] = {"input_tokens": 900, "output_tokens": 100}
    write_script(root, script)
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + f"\nbudget:\n  item: {cap}\n")
    assert phasegate(root, "new", "item", "-d", "Add rate limiting").returncode == 0
    assert phasegate(root, "run", "item").returncode == 3
    return root


def raised(root: Path) -> float:
    status = json.loads(phasegate(root, "status", "item", "--json").stdout)
    return status["budget"]["caps"][0]["raised"]


@pytest.mark.parametrize("note", ["2.5$", "$2.50", "2.5 USD", "raise: 2.5 usd"])
def test_usd_amounts_as_written_with_their_unit(tmp_path: Path, note: str) -> None:
    root = held_repo(tmp_path, "{usd: 0.5}")
    answered = phasegate(root, "answer", "item", "budget", "raise", "--note", note)
    assert answered.returncode == 0, answered.stderr
    assert raised(root) == 2.5


@pytest.mark.parametrize("note", ["1,500", "1,500 tokens", "raise: 1500 tokens"])
def test_token_amounts_with_grouping_commas_and_their_unit(tmp_path: Path, note: str) -> None:
    root = held_repo(tmp_path, "{tokens: 2500}")
    answered = phasegate(root, "answer", "item", "budget", "raise", "--note", note)
    assert answered.returncode == 0, answered.stderr
    assert raised(root) == 1500


@pytest.mark.parametrize("note", ["2,5", "2.5 tokens", "1,50"])
def test_a_decimal_comma_or_the_other_unit_is_refused(tmp_path: Path, note: str) -> None:
    root = held_repo(tmp_path, "{usd: 0.5}")
    answered = phasegate(root, "answer", "item", "budget", "raise", "--note", note)
    assert answered.returncode == 2
    assert "must be a positive amount" in answered.stderr
    assert raised(root) == 0


def test_run_answer_takes_an_amount_with_its_unit(tmp_path: Path) -> None:
    """``run --answer "budget=raise: 2.5$"`` is not refused before the run, and raises."""
    root = held_repo(tmp_path, "{usd: 0.5}")
    ran = phasegate(root, "run", "item", "--answer", "budget=raise: 2.5$")
    assert "must be a positive amount" not in ran.stderr, ran.stderr
    assert raised(root) == 2.5
