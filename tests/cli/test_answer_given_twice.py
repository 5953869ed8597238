"""`run --answer ID=A --answer ID=B` gives one decision two answers: refused (exit 2, one
line naming the decision and both choices) before anything runs, not settled silently by
the last one. The same answer given twice is one answer."""

from __future__ import annotations

import json
from pathlib import Path

from test_hostile_text_and_answers import GATES, error_lines, phasegate, setup

from phasegate.errors import ExitCode


def test_two_answers_to_one_decision_are_refused_before_the_run(tmp_path: Path) -> None:
    repo = setup(tmp_path / "repo", "gates", GATES)
    assert phasegate(repo, "new", "g1", "-w", "gates").returncode == 0
    journal = repo / "gitems" / "g1" / ".journal.jsonl"
    before = journal.read_text() if journal.exists() else ""
    refused = phasegate(repo, "run", "g1", "-a", "go-g1=yes", "-a", "go-g1=blk")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stderr
    (line,) = error_lines(refused.stderr)
    assert "--answer go-g1=...: given twice, as 'yes' and 'blk'" in line, line
    assert (journal.read_text() if journal.exists() else "") == before


def test_the_same_answer_twice_is_taken(tmp_path: Path) -> None:
    repo = setup(tmp_path / "repo", "gates", GATES)
    assert phasegate(repo, "new", "g1", "-w", "gates").returncode == 0
    taken = phasegate(repo, "run", "g1", "-a", "go-g1=yes", "-a", "go-g1 = yes")
    assert taken.returncode == 0, taken.stderr
    assert json.loads(phasegate(repo, "status", "g1", "--json").stdout)["status"] == "completed"
