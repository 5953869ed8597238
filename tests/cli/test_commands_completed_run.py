"""A plain `phasegate run ITEM` of a workflow with commands: refused (exit 2, naming the
commands) while the item goes on, but on an item that has ended it says so (exit 0), as
`run` of an ended item does in any workflow, instead of advising a command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: cw
modes: {standard: {max_iterations: 1}}
roles: {w: {access: write}}
commands:
  draft: {runs_in: [drafting], stops_at: [shipping]}
  ship: {runs_in: [shipping]}
nodes:
  - {id: a, label: drafting, executor: w, prompt: a.md, on: {pass: b}}
  - {id: b, label: shipping, executor: w, prompt: b.md, on: {pass: q}}
  - id: q
    kind: gate
    question: ship it?
    choices: {ship: fin, drop: gone}
  - {id: fin, kind: end, label: shipped}
  - {id: gone, kind: end, label: dropped, status: stopped}
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert run_cli(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "cw"
    prompts.mkdir(parents=True)
    (prompts / "a.md").write_text("draft {{ item }}\n")
    (prompts / "b.md").write_text("ship {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "cw.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    assert run_cli(repo, "new", "c1", "--workflow", "cw").returncode == 0
    return repo


def walk_to_the_gate(repo: Path) -> None:
    refused = run_cli(repo, "run", "c1")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stdout + refused.stderr
    assert "phasegate run c1 --command NAME (NAME: draft or ship)" in refused.stderr
    assert run_cli(repo, "run", "c1", "--command", "draft").returncode == 0
    assert run_cli(repo, "run", "c1", "--command", "ship").returncode == ExitCode.WAITING


def test_a_plain_run_of_a_completed_item_says_it_is_complete(repo: Path) -> None:
    walk_to_the_gate(repo)
    assert run_cli(repo, "answer", "c1", "q", "ship").returncode == 0
    done = run_cli(repo, "run", "c1", "--command", "ship")
    assert done.returncode == 0, done.stderr
    before = (repo / "work" / "c1" / ".engine.json").read_bytes()
    again = run_cli(repo, "run", "c1")
    said = again.stdout + again.stderr
    assert again.returncode == 0, said
    assert "c1 (cw, mode standard, completed)" in said, said
    assert "--command NAME" not in said and "belongs to workflow" not in said, said
    assert (repo / "work" / "c1" / ".engine.json").read_bytes() == before


def test_a_plain_run_of_a_stopped_item_says_it_has_ended(repo: Path) -> None:
    walk_to_the_gate(repo)
    assert run_cli(repo, "answer", "c1", "q", "drop").returncode == 0
    assert run_cli(repo, "run", "c1", "--command", "ship").returncode == 0
    again = run_cli(repo, "run", "c1")
    said = again.stdout + again.stderr
    assert again.returncode == 0, said
    assert "c1 already ended at dropped (stopped); nothing to run" in said, said
    assert "--command NAME" not in said, said
