"""Refused answers name what was meant: a choice given in another case (`GO` for `go`) is
refused, choices being exact, naming the choice (`phasegate answer`, `run --answer` for a
gate and for phasegate's own decisions alike); `phasegate answer` to a gate no run has
asked yet says the answer goes to the run that asks it (`--answer`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli

WORKFLOW = """\
name: hold
modes: {standard: {max_iterations: 1}}
roles: {w: {access: write}}
nodes:
  - {id: b, label: building, executor: w, prompt: b.md, on: {pass: q}}
  - id: q
    kind: gate
    question: hold?
    choices: {hold: "@blocked", go: fin}
  - {id: fin, kind: end}
"""


def test_a_choice_in_another_case_names_the_one_meant(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert run_cli(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "hold"
    prompts.mkdir(parents=True)
    (prompts / "b.md").write_text("build {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "hold.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    assert run_cli(repo, "new", "k1", "--workflow", "hold").returncode == 0
    assert run_cli(repo, "run", "k1").returncode == 3
    for args, meant in (
        (("answer", "k1", "q", "GO"), "'go'"),
        (("run", "k1", "--answer", "q=Go"), "'go'"),
        (("run", "k1", "--answer", "transition-warning=Proceed"), "'proceed'"),
    ):
        refused = run_cli(repo, *args)
        assert refused.returncode == 2, refused.stderr
        line = refused.stderr.strip()
        assert len(line.splitlines()) == 1, line
        assert "is not a choice of decision" in line, line
        assert line.endswith(f"; did you mean {meant}?"), line
    assert run_cli(repo, "answer", "k1", "q", "go").returncode == 0


def test_answering_a_gate_not_asked_yet_says_what_answers_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert run_cli(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "hold"
    prompts.mkdir(parents=True)
    (prompts / "b.md").write_text("build {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "hold.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    assert run_cli(repo, "new", "k1", "--workflow", "hold").returncode == 0
    refused = run_cli(repo, "answer", "k1", "q", "go")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip() == (
        "phasegate: error: k1 has no decision 'q' (pending: none); a run has not asked it "
        "yet: give the answer to the run that asks it, --answer q=CHOICE"
    ), refused.stderr
    unknown = run_cli(repo, "answer", "k1", "zz", "go")
    assert unknown.stderr.strip().endswith("(pending: none)"), unknown.stderr
    followed = run_cli(repo, "run", "k1", "--answer", "q=go")
    assert followed.returncode == 0, followed.stderr
