"""`run --answer "ID=CHOICE: NOTE"` holds a note to the limit `phasegate answer` has
(20,000 characters): a longer one is refused (exit 2, one line) before the run."""

from __future__ import annotations

import json
from pathlib import Path

from test_hostile_text_and_answers import GATES, error_lines, phasegate, setup

from phasegate.errors import ExitCode


def test_an_answer_note_over_the_limit_is_refused_as_phasegate_answer_refuses_it(
    tmp_path: Path,
) -> None:
    """`--answer "ID=CHOICE: NOTE"` holds a note to the limit `phasegate answer` has
    (20,000 characters): a longer one is refused before the run, nothing recorded."""
    repo = setup(tmp_path / "repo", "gates", GATES)
    assert phasegate(repo, "new", "g1", "-w", "gates").returncode == 0
    refused = phasegate(repo, "run", "g1", "-a", "go-g1=fix: " + "x" * 20_001)
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stderr[:300]
    (line,) = error_lines(refused.stderr)
    assert line.endswith(
        "--answer go-g1=...: the note has 20,001 characters: a note may have at most 20,000; "
        "shorten it"
    ), line
    status = json.loads(phasegate(repo, "status", "g1", "--json").stdout)
    assert status["status"] != "completed"
    taken = phasegate(repo, "run", "g1", "-a", "go-g1=fix: " + "x" * 20_000)
    assert taken.returncode == 0, taken.stderr[:300]
