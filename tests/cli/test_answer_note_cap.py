"""``phasegate answer`` takes a note of at most 20,000 characters, as the dashboard does: a
longer one (``--note``, or after ``CHOICE:``) is refused with exit 2 and one line naming the
cap, and nothing is recorded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from phasegate.engine.answers import MAX_NOTE_CHARS

WORKFLOW = """\
name: hold
modes: {standard: {max_iterations: 1}}
roles: {w: {access: write}}
nodes:
  - {id: b, label: building, executor: w, prompt: b.md, on: {pass: q}}
  - id: q
    kind: gate
    question: hold?
    choices: {hold: {to: "@blocked", note: required}, go: fin}
  - {id: fin, kind: end}
"""


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert phasegate(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "hold"
    prompts.mkdir(parents=True)
    (prompts / "b.md").write_text("build {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "hold.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    assert phasegate(repo, "new", "k1", "--workflow", "hold").returncode == 0
    assert phasegate(repo, "run", "k1").returncode == 3
    return repo


def _journal(repo: Path) -> str:
    return next(repo.rglob(".journal.jsonl")).read_text()


def test_a_note_over_the_cap_is_refused_and_nothing_is_recorded(repo: Path) -> None:
    long_note = "n" * (MAX_NOTE_CHARS + 1)
    for args in (["hold", "--note", long_note], [f"hold: {long_note}"]):
        refused = phasegate(repo, "answer", "k1", "q", *args)
        assert refused.returncode == 2, refused.stderr
        line = refused.stderr.strip()
        assert len(line.splitlines()) == 1, line
        assert f"at most {MAX_NOTE_CHARS:,}" in line and "nothing changed" in line, line
        assert "decision 'q'" in line and "'k1'" in line, line
        assert "nnnnnnnnnn" not in _journal(repo)
        listed = json.loads(phasegate(repo, "decisions", "k1", "--json").stdout)
        assert [d["id"] for d in listed] == ["q"]
    longest = "m" * MAX_NOTE_CHARS
    taken = phasegate(repo, "answer", "k1", "q", "hold", "--note", longest)
    assert taken.returncode == 0, taken.stderr
    assert longest in _journal(repo)
