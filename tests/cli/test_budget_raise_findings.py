"""A budget raise by an absurd amount (``raise: 99999999999999999999999999999999``) is refused
with one line (exit 2) naming the largest amount taken; the decision still waits, and the
largest raise taken keeps the configured cap exact in ``status``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_budget_answers_and_config_messages import configure, one_line_error, repo
from test_cli import phasegate

from phasegate.engine.answers import MAX_AMOUNT, MAX_WHOLE_AMOUNT, canonical, parse_amount
from phasegate.errors import BadInputError

__all__ = ["repo"]  # the fixture, used by name

HUGE = "99999999999999999999999999999999"


@pytest.mark.parametrize(
    ("note", "whole", "expected"),
    [
        ("2.5", False, 2.5),
        ("$2.5", False, 2.5),
        ("+500_000", True, 500000.0),
        (str(MAX_AMOUNT), False, float(MAX_AMOUNT)),
        (str(MAX_WHOLE_AMOUNT), True, float(MAX_WHOLE_AMOUNT)),
        (str(MAX_AMOUNT + 1), False, None),
        (str(MAX_WHOLE_AMOUNT + 1), True, None),
        (HUGE, True, None),
        (HUGE, False, None),
        ("1e308", False, None),
        ("nan", False, None),
        ("inf", True, None),
        ("0", False, None),
    ],
)
def test_parse_amount_takes_positive_amounts_up_to_a_bound(
    note: str, whole: bool, expected: float | None
) -> None:
    assert parse_amount(note, whole=whole) == expected


def test_canonical_refuses_an_absurd_raise_naming_the_bound() -> None:
    question = {
        "id": "budget",
        "choices": {"raise": "", "stop": ""},
        "amount_notes": ["raise"],
        "whole_amounts": True,
    }
    with pytest.raises(BadInputError) as refused:
        canonical(question, f"raise: {HUGE}")
    message = str(refused.value)
    assert "must be a whole amount" in message and f"{MAX_WHOLE_AMOUNT:,}" in message
    assert HUGE in message
    assert canonical(question, f"raise: {MAX_WHOLE_AMOUNT}").note == str(MAX_WHOLE_AMOUNT)


def test_a_huge_tokens_raise_is_refused_and_the_decision_still_waits(repo: Path) -> None:
    configure(repo, "budget: {item: {tokens: 1000}}\n")
    first = phasegate(repo, "run", "item")
    assert first.returncode == 3, first.stderr
    line = one_line_error(phasegate(repo, "answer", "item", "budget", f"raise: {HUGE}"))
    assert "must be a whole amount" in line and f"{MAX_WHOLE_AMOUNT:,}" in line
    decisions = json.loads(phasegate(repo, "decisions", "item", "--json").stdout)
    assert [d["id"] for d in decisions] == ["budget"]
    taken = phasegate(repo, "answer", "item", "budget", f"raise: {MAX_WHOLE_AMOUNT}")
    assert taken.returncode == 0, taken.stderr
    status = json.loads(phasegate(repo, "status", "item", "--json").stdout)
    (cap,) = status["budget"]["caps"]
    assert cap["configured"] == 1000 and cap["raised"] == MAX_WHOLE_AMOUNT
    assert cap["limit"] == MAX_WHOLE_AMOUNT + 1000
    assert cap["remaining"] == cap["limit"] - cap["spent"]


def test_a_huge_usd_raise_is_refused(repo: Path) -> None:
    configure(repo, "budget: {item: {usd: 0.35}}\n")
    assert phasegate(repo, "run", "item").returncode == 3
    line = one_line_error(phasegate(repo, "answer", "item", "budget", "raise: 1e30"))
    assert "must be a positive amount" in line and f"{MAX_AMOUNT:,}" in line
