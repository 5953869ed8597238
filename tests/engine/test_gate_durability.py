"""Human gates are durable: a pending decision survives restarts, a bad answer changes nothing.

Invariants pinned (the gate rules of docs/workflows.md, "Gates"):
- a pending decision is written before it is asked, once: running again without
  an answer asks the same decision and records nothing new, however often;
- ``phasegate answer`` with an unknown decision, a choice that is not one of
  the decision's choices, or on a decision already answered exits 2 and
  leaves every file as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from crash_helpers import backend_calls, journal, phasegate
from review_loop_helpers import DECISION, FOLDER, ITEM, make_repo, script, words

WAITING = 3


def tree_bytes(repo: Path) -> dict[str, bytes]:
    """Every file of the repository but git's own and the locks, with its bytes."""
    return {
        path.relative_to(repo).as_posix(): path.read_bytes()
        for path in sorted(repo.rglob("*"))
        if path.is_file()
        and not path.relative_to(repo).as_posix().startswith((".git/", ".phasegate/locks/"))
    }


@pytest.fixture
def waiting_repo(tmp_path: Path) -> Path:
    """The example item stopped at its gate (the critic rejected the plan)."""
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    assert phasegate(repo, "run", ITEM, ok=(WAITING,)) == WAITING
    return repo


def test_a_pending_gate_survives_any_number_of_restarts(waiting_repo: Path) -> None:
    """Three more runs without a terminal: exit 3 each time, the same pending decision,
    no decision asked twice, no agent called again, every file byte for byte the same."""
    repo = waiting_repo
    engine = repo / FOLDER / ".engine.json"
    first = json.loads(engine.read_text())["decisions"][DECISION]
    assert first["status"] == "pending"
    before = tree_bytes(repo)
    for _ in range(3):
        assert phasegate(repo, "run", ITEM, ok=(WAITING,)) == WAITING
        assert tree_bytes(repo) == before  # state, journal, calls log: nothing added
    assert json.loads(engine.read_text())["decisions"][DECISION] == first
    events = [e["event"] for e in journal(repo, FOLDER)]
    assert events.count("decision.needed") == 1
    assert "decision.answered" not in events
    assert [c["role"] for c in backend_calls(repo)] == ["planner", "critic"]


@pytest.mark.parametrize(
    ("decision", "choice", "says"),
    [
        ("plan-ok", "revise", f"{ITEM} has no decision 'plan-ok' (pending: {DECISION})"),
        (DECISION, "maybe", f"'maybe' is not a choice of decision '{DECISION}' (choices: revise, "),
        (DECISION, "Revise", "'Revise' is not a choice of decision"),
        (DECISION, "", "'' is not a choice of decision"),
    ],
)
def test_answer_with_an_unknown_decision_or_choice_changes_nothing(
    waiting_repo: Path, decision: str, choice: str, says: str
) -> None:
    """Exit 2, one line naming what is wrong, and every file left byte for byte."""
    before = tree_bytes(waiting_repo)
    result = _answer(waiting_repo, decision, choice)
    assert result.returncode == 2
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert tree_bytes(waiting_repo) == before


def test_a_decision_answered_once_refuses_a_second_answer(waiting_repo: Path) -> None:
    """The second answer (another person, another tab) is refused and changes nothing."""
    assert _answer(waiting_repo, DECISION, "drop").returncode == 0
    before = tree_bytes(waiting_repo)
    late = _answer(waiting_repo, DECISION, "implement")
    assert late.returncode == 2
    assert f"decision {DECISION} of {ITEM} was already answered: 'drop'" in late.stderr
    assert tree_bytes(waiting_repo) == before


def _answer(repo: Path, decision: str, choice: str) -> subprocess.CompletedProcess[str]:
    """``phasegate answer ITEM DECISION CHOICE`` as a person types it (no terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "answer", ITEM, decision, choice],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env=dict(os.environ),
    )
