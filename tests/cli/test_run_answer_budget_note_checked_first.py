"""`run --answer budget=raise: NOTE` whose note is no amount (`abc`, `-3`) is refused before
the run (exit 2, nothing run), not when the cap is reached after agent calls were made and
paid for. A note that is an amount is taken when the cap is reached."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli

WORKFLOW = """\
name: two
modes: {standard: {max_iterations: 1}}
roles: {w: {access: write}}
nodes:
  - {id: b, label: building, executor: w, prompt: b.md, on: {pass: c}}
  - {id: c, label: checking, executor: w, prompt: b.md, on: {pass: fin}}
  - {id: fin, kind: end}
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert run_cli(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "two"
    prompts.mkdir(parents=True)
    (prompts / "b.md").write_text("build {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "two.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    with (repo / ".phasegate" / "config.yaml").open("a") as config:
        config.write("budget:\n  item: {tokens: 10}\n")
    assert run_cli(repo, "new", "t1", "--workflow", "two").returncode == 0
    return repo


@pytest.mark.parametrize("note", ["abc", "-3"])
def test_a_raise_note_that_is_no_amount_is_refused_before_the_run(repo: Path, note: str) -> None:
    refused = run_cli(repo, "run", "t1", "--answer", f"budget=raise: {note}")
    assert refused.returncode == 2, refused.stderr
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert line.startswith(f"phasegate: error: --answer budget=raise: {note}: "), line
    assert f"not {note!r}" in line, line
    assert "working on" not in refused.stderr


def test_a_raise_note_that_is_an_amount_is_taken(repo: Path) -> None:
    ran = run_cli(repo, "run", "t1", "--answer", "budget=raise: 500")
    assert ran.returncode == 0, ran.stderr


def test_a_raise_in_the_wrong_unit_for_the_question_asked_changes_nothing(repo: Path) -> None:
    """With the question asked (a token cap), a fractional raise is refused before the run
    like any bad answer: the item still waits on the question, not shown blocked."""
    held = run_cli(repo, "run", "t1")
    assert held.returncode == 3, held.stderr
    before = run_cli(repo, "status", "t1", "--json")
    assert '"id": "budget"' in before.stdout, before.stdout
    journal = repo / "work" / "t1" / ".journal.jsonl"
    recorded = journal.read_bytes()

    refused = run_cli(repo, "run", "t1", "--answer", "budget=raise: 0.5")
    assert refused.returncode == 2, refused.stderr
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert line.startswith("phasegate: error: --answer budget=raise: 0.5: "), line
    assert "whole amount" in line, line
    assert journal.read_bytes() == recorded
    after = run_cli(repo, "status", "t1", "--json")
    assert after.stdout == before.stdout
    assert '"blocked": true' not in after.stdout

    taken = run_cli(repo, "run", "t1", "--answer", "budget=raise: 5000")
    assert taken.returncode == 0, taken.stderr
