"""`phasegate answer ITEM D C1`, then `phasegate run ITEM --answer D=C2` (another choice):
the recorded answer is the one the run follows (the first recorded wins), and the flag
answers only the gate's next visit: a warning line naming both says so before the run,
instead of the flag being passed over without a word. The same answer again says nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
    assert phasegate(repo, "run", "k1").returncode == 3
    return repo


def test_a_flag_answer_other_than_the_recorded_one_is_said(repo: Path) -> None:
    assert phasegate(repo, "answer", "k1", "q", "hold").returncode == 0
    ran = phasegate(repo, "run", "k1", "--answer", "q=go")
    # The recorded answer is acted on: 'hold' leads to the blocked end.
    assert ran.returncode == 4, ran.stderr
    warned = [line for line in ran.stderr.splitlines() if "--answer q=go" in line]
    assert len(warned) == 1, ran.stderr
    assert warned[0].startswith("phasegate: warning:"), warned
    assert "'hold'" in warned[0] and "already answered" in warned[0], warned
    assert "next visit" in warned[0], warned


def test_the_recorded_answer_given_again_runs(repo: Path) -> None:
    assert phasegate(repo, "answer", "k1", "q", "go").returncode == 0
    ran = phasegate(repo, "run", "k1", "--answer", "q=go")
    assert ran.returncode == 0, ran.stderr
