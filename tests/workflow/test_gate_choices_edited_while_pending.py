"""A gate's choices edited in the workflow while its decision waits: the run already said the
new choices, yet `phasegate decisions` and `phasegate answer` went on with the ones first
asked, and an answer that is no choice of the gate any more ended the gate `invalid` with no
word of why. Now the next run asks the decision with the workflow's choices (so `decisions`
and `answer` take them), and an answer the gate no longer has stops the run blocked with one
line saying so; the run after asks the gate again."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    question: Go on?
    choices: {yes: done, no: stopped}
  - id: done
    kind: end
  - id: stopped
    kind: end
    status: stopped
"""


def started(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A repository whose item `one` waits at the gate `ask` (choices yes, no)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    (repo / ".phasegate" / "workflows").mkdir(parents=True, exist_ok=True)
    (repo / ".phasegate" / "workflows" / "wf.yaml").write_text(WORKFLOW)
    code, _, err = cli(capsys, "new", "one", "--workflow", "wf", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    assert "(choices: yes, no)" in err
    return repo


def rename_choice(repo: Path) -> None:
    path = repo / ".phasegate" / "workflows" / "wf.yaml"
    path.write_text(path.read_text().replace("{yes: done,", "{go: done,"))


def test_the_next_run_asks_with_the_choices_the_workflow_has_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = started(tmp_path, capsys)
    rename_choice(repo)
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    assert "(choices: go, no)" in err
    code, out, err = cli(capsys, "decisions", "one", "-C", str(repo))
    assert code == 0, err
    assert "answer: phasegate answer one ask go" in out, out
    assert "    yes" not in out, out
    code, out, err = cli(capsys, "answer", "one", "ask", "go", "-C", str(repo))
    assert code == 0, out + err
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == 0, out + err
    code, out, err = cli(capsys, "status", "one", "-C", str(repo))
    assert "completed" in out.splitlines()[0], out


def test_an_answer_the_gate_no_longer_has_says_why_and_is_asked_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = started(tmp_path, capsys)
    code, out, err = cli(capsys, "answer", "one", "ask", "yes", "-C", str(repo))
    assert code == 0, out + err
    rename_choice(repo)
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    errors = [line for line in err.splitlines() if line.startswith("phasegate: error:")]
    assert len(errors) == 1, err
    assert (
        "the answer 'yes' to decision ask is no choice of gate 'ask' any more (choices: go, no): "
        "the workflow changed since it was answered; the next run asks it again"
    ) in errors[0], errors
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    assert "(choices: go, no)" in err
