"""``phasegate logs`` of a folder whose state file cannot be read and whose journal names
an item no name can be (the journal was edited) is refused as ``status`` refuses such a
state file: one line saying the file was edited and to restore it (exit 5), the same
advice from one place."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, new_repo

from phasegate.errors import ExitCode


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_a_journal_naming_an_impossible_item_is_said_to_be_edited(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    folder = repo / "docs" / "features" / ITEM
    engine = folder / ".engine.json"
    state = json.loads(engine.read_text())
    state["item"] = "../elsewhere"
    engine.write_text(json.dumps(state))
    status = phasegate(repo, "status", ITEM)
    assert status.returncode == ExitCode.STATE
    assert "the state file was edited; restore it (e.g. from git)" in status.stderr

    engine.write_text("{bad")
    journal = folder / ".journal.jsonl"
    first, *rest = journal.read_text().splitlines(keepends=True)
    event = {**json.loads(first), "item": "../elsewhere"}
    journal.write_text(json.dumps(event) + "\n" + "".join(rest))
    before = journal.read_bytes()
    result = phasegate(repo, "logs", ITEM)
    assert result.returncode == ExitCode.STATE, result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert "holds work item '../elsewhere' (its .journal.jsonl says so)" in line, line
    assert "its .journal.jsonl was edited; restore it (e.g. from git)" in line, line
    assert journal.read_bytes() == before
