"""`phasegate answer ITEM budget stop`, then `phasegate run ITEM --answer budget=raise:5`:
the recorded stop is the answer the run acts on (the first recorded wins) and the run stops
at the cap; the flag answers the question only when a later run asks it again. A warning
line says so before the run, instead of the flag being passed over without a word."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

#: Executor calls cost $0.30, reviews $0.10; reviewers never approve.
REJECTING = """\
executor:
  "*": [{write: {"{item_dir}/brainstorm.md": "# B\\n"}, cost_usd: 0.3}]
"*":
  "*":
    - verdict: {approved: false, summary: no, issues: [{severity: blocker, description: more}]}
      cost_usd: 0.1
"""


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-q", "-m", "i"], cwd=repo, check=True)
    assert cli(capsys, "init", "--test-command", "true", "-C", str(repo))[0] == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\nbudget:\n  item: {usd: 0.8}\n")
    assert cli(capsys, "new", "it", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    return repo


def test_a_raise_flag_after_a_recorded_stop_is_said(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "answer", "it", "budget", "stop", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-a", "budget=raise:5", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    assert "Stopped at the budget cap as answered (stop)" in err, err
    assert (
        "--answer budget=raise:5: decision budget of it was already answered 'stop' "
        "(by command); the run acts on that answer (the first recorded) and stops at the "
        "cap, and this flag answers the question only when a later run asks it again"
    ) in err, err
    # The next run asks again, and the flag given to it answers.
    code, out, err = cli(capsys, "run", "it", "-a", "budget=raise:5", "-C", str(repo))
    assert "already answered" not in err, err
    assert "Stopped at the budget cap" not in err, err


def test_the_same_answer_again_says_nothing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "answer", "it", "budget", "stop", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-a", "budget=stop", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    assert "already answered" not in err, err


def test_an_answer_given_to_an_ended_item_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    assert cli(capsys, "init", "-C", str(repo))[0] == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "tiny"
    prompts.mkdir(parents=True)
    (prompts / "b.md").write_text("do {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "tiny.yaml").write_text(
        "name: tiny\nmodes: {standard: {max_iterations: 1}}\nroles: {w: {access: write}}\n"
        "nodes:\n  - {id: b, executor: w, prompt: b.md, on: {pass: q}}\n"
        "  - {id: q, kind: gate, question: go?, choices: {go: fin}}\n  - {id: fin, kind: end}\n"
    )
    (repo / ".phasegate" / "agents.yaml").write_text('"*": {"*": [{text: ok}]}\n')
    assert cli(capsys, "new", "t1", "-w", "tiny", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "t1", "-a", "q=go", "-C", str(repo))
    assert code == 0 and "has already ended" not in err, out + err
    code, out, err = cli(capsys, "run", "t1", "-a", "q=go", "-C", str(repo))
    assert code == 0, out + err
    assert "--answer q=go: t1 has already ended (completed); nothing runs, so no gate asks" in err
