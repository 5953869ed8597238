"""A journal line hand-edited (or written by something else) to record an outcome the
action does not declare is the journal's problem, said as such (exit code 5, naming the
journal, which is left untouched), not the workflow's ("no way on from finish")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import item_run_until
from engine_helpers import phasegate_cli as phasegate

from phasegate.errors import ExitCode


def test_an_undeclared_action_outcome_in_the_journal_is_named(tmp_path: Path) -> None:
    repo = item_run_until(tmp_path / "repo", "verify")
    journal = repo / "docs/features/x/.journal.jsonl"
    edited = {
        "ts": "2026-01-01T00:00:00Z",
        "event": "action.done",
        "item": "x",
        "key": "finish#1/action",
        "node": "finish",
        "action": "finish",
        "outcome": "bogus",
    }
    with journal.open("a") as handle:
        handle.write(json.dumps(edited) + "\n")
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == ExitCode.STATE, ran.stderr
    (said,) = [line for line in ran.stderr.splitlines() if line.startswith("phasegate:")]
    assert str(journal) in said and "'bogus'" in said and "finish#1/action" in said, said
    assert json.dumps(edited) in journal.read_text()  # the line is left as it is
