"""A choice that needs a note, given without one, is refused with advice the refused
command can follow: `run --answer` shows the `--answer "ID=CHOICE: NOTE"` form (run has no
--note), `phasegate answer` shows the inline note or its --note option."""

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
    created = phasegate(repo, "new", "k1", "--workflow", "hold")
    assert created.returncode == 0, created.stderr
    return repo


def test_run_answer_without_a_required_note_shows_the_answer_form(repo: Path) -> None:
    refused = phasegate(repo, "run", "k1", "--answer", "q=hold")
    assert refused.returncode == 2, refused.stderr
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "choice 'hold' of decision 'q' needs a note" in line
    assert '--answer "q=hold: what to change"' in line
    assert "--note" not in line
    # The advice, followed, is taken: the note reaches the gate, whose choice blocks.
    followed = phasegate(repo, "run", "k1", "--answer", "q=hold: what to change")
    assert followed.returncode == 4, followed.stderr
    assert "No such option" not in followed.stderr


def test_answer_command_without_a_required_note_still_offers_note_option(repo: Path) -> None:
    assert phasegate(repo, "run", "k1").returncode == 3
    refused = phasegate(repo, "answer", "k1", "q", "hold")
    assert refused.returncode == 2, refused.stderr
    assert "'hold: what to change', or --note TEXT" in refused.stderr
    answered = phasegate(repo, "answer", "k1", "q", "hold", "--note", "what to change")
    assert answered.returncode == 0, answered.stderr


def _journal(repo: Path) -> str:
    return next(repo.rglob(".journal.jsonl")).read_text()


def test_a_note_over_the_cap_is_refused_and_nothing_is_recorded(repo: Path) -> None:
    """``phasegate answer`` takes a note of at most 20,000 characters, as the dashboard
    does: a longer one (``--note``, or after ``CHOICE:``) is refused with exit 2 and one line
    naming the cap, and nothing is recorded."""
    assert phasegate(repo, "run", "k1").returncode == 3
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
