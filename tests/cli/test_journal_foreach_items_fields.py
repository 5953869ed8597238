"""A hand-edited ``foreach.items`` line after the state's position (the items a resumed run
takes from the journal) that names an item with no entry, or whose items are not names,
stops `phasegate run` with exit code 5 and one line naming the journal, the line and the
field, the journal left as it was (not an internal error)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from review_loop_helpers import FOLDER, ITEM, make_repo, script, words

from phasegate.errors import ExitCode

ENTRY = '"T1": {"status": "pending", "at": null, "title": "Add the limiter", "deps": []}'
CASES = {
    '"items": [5], "entries": {}': "field 'items[0]' has the wrong type (int)",
    '"items": ["T1"], "entries": {"T1": 5}': "field 'entries.T1' has the wrong type (int)",
    f'"items": ["T1", "T9"], "entries": {{{ENTRY}}}': (
        "field 'items[1]' ('T9') has no entry in field 'entries'"
    ),
}


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture(scope="module")
def at_the_gate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped review-loop example waiting at its gate, before its foreach ``tasks``."""
    agents = script([words("REJECTED", "no"), words("APPROVED")], {}, sleep=0)
    repo = make_repo(tmp_path_factory.mktemp("items") / "repo", agents)
    assert phasegate(repo, "run", ITEM).returncode == ExitCode.WAITING
    return repo


@pytest.mark.parametrize("fields", list(CASES))
def test_foreach_items_that_cannot_be_read_back_are_reported(
    fields: str, at_the_gate: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(at_the_gate, repo, symlinks=True)
    journal = repo / FOLDER / ".journal.jsonl"
    with open(journal, "a") as handle:
        handle.write(
            '{"ts": "t", "event": "foreach.items", "key": "tasks#1/items", "node": "tasks", '
            f'"rule": "document", {fields}}}\n'
        )
    number = len(journal.read_text().splitlines())
    before = journal.read_bytes()
    ran = phasegate(repo, "run", ITEM, "--answer", "plan-rejected=implement")
    assert ran.returncode == ExitCode.STATE, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert "internal error" not in ran.stderr and "Traceback" not in ran.stderr
    assert line.startswith(f"phasegate: error: journal {journal} line {number}: ")
    assert CASES[fields] in line and line.endswith("it was left untouched")
    assert journal.read_bytes() == before
