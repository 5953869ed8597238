"""`--answer ID=CHOICE` whose ID a templated gate could ask (`escalate-KEY`) but the item
never asked (a key mistyped, a gate the run stopped before) answered nothing: the run says
so in a warning naming the answer, instead of dropping it without a word. An answer the run
used, and phasegate's own `budget` answered just in case, are not warned of."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import cli
from test_escalation_answers_unclear import MEDIUM, unclear_repo


def test_an_answer_to_a_decision_never_asked_is_warned_of(tmp_path: Path) -> None:
    root = unclear_repo(tmp_path)
    assert cli(root, "implement", "006", "-q").returncode == 3
    ran = cli(root, "implement", "006", "-q", "--answer", "escalate-0000zzzz=skip_with_warning")
    assert ran.returncode == 3, ran.stderr
    assert (
        "--answer escalate-0000zzzz=skip_with_warning answered nothing: 006 has not asked "
        "decision 'escalate-0000zzzz'; give it again to the run that asks it"
    ) in ran.stderr, ran.stderr
    assert ran.stderr.strip().splitlines()[-1].startswith("phasegate: waiting:"), ran.stderr


def test_an_answer_used_is_not_warned_of(tmp_path: Path) -> None:
    root = unclear_repo(tmp_path)
    assert cli(root, "implement", "006", "-q").returncode == 3
    given = ("--answer", f"escalate-{MEDIUM}=skip_with_warning", "--answer", "budget=stop")
    ran = cli(root, "implement", "006", "-q", *given)
    assert ran.returncode == 3, ran.stderr
    assert "answered nothing" not in ran.stderr, ran.stderr
