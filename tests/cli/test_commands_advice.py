"""For a workflow with commands, `new`, `status` and `run` advise the command that runs
where the item stands (the mode's start for a new item), and a command run on a
completed item says it is complete."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

WORKFLOW = """\
name: cm
modes: {standard: {max_iterations: 1}, late: {max_iterations: 1, start: b}}
roles: {w: {access: write}}
commands:
  draft: {runs_in: [drafting], stops_at: [building]}
  build: {runs_in: [building]}
nodes:
  - {id: a, label: drafting, executor: w, prompt: a.md}
  - {id: b, label: building, executor: w, prompt: b.md, on: {pass: q}}
  - {id: fin, kind: end}
  - id: q
    kind: gate
    question: hold?
    choices: {hold: {to: "@blocked", note: required}, go: fin}
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


def advised(output: str) -> str:
    return next(line for line in output.splitlines() if "Next:" in line).split("Next:")[1].strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert phasegate(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "cm"
    prompts.mkdir(parents=True)
    (prompts / "a.md").write_text("draft {{ item }}\n")
    (prompts / "b.md").write_text("build {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "cm.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    return repo


@pytest.mark.parametrize(
    ("mode", "command", "phase"), [("late", "build", "building"), ("standard", "draft", "drafting")]
)
def test_new_and_status_advise_the_command_of_the_modes_start(
    repo: Path, mode: str, command: str, phase: str
) -> None:
    created = phasegate(repo, "new", "k2", "--workflow", "cm", "--mode", mode)
    assert created.returncode == 0, created.stderr
    expected = f"phasegate run k2 --command {command}"
    assert advised(created.stdout) == expected
    status = phasegate(repo, "status", "k2")
    assert advised(status.stdout) == expected
    assert f"next: {phase}" in status.stdout
    followed = phasegate(repo, *expected.split()[1:])
    assert followed.returncode in (0, 3), followed.stderr
    assert "is in phase" not in followed.stderr


@pytest.mark.parametrize("command", ["build", "draft"])
def test_a_command_on_a_completed_item_says_it_is_complete(repo: Path, command: str) -> None:
    assert phasegate(repo, "new", "k2", "--workflow", "cm", "--mode", "late").returncode == 0
    assert phasegate(repo, "run", "k2", "--command", "build").returncode == 3
    assert phasegate(repo, "answer", "k2", "q", "go").returncode == 0
    # The gate has no label of its own: the command whose run reached it goes on from it.
    assert advised(phasegate(repo, "status", "k2").stdout) == "phasegate run k2 --command build"
    done = phasegate(repo, "run", "k2", "--command", "build")
    assert done.returncode == 0, done.stderr
    assert "complete" in phasegate(repo, "status", "k2").stdout
    again = phasegate(repo, "run", "k2", "--command", command)
    assert again.returncode == 0, again.stderr
    assert "k2 (cm, mode late, completed)" in again.stdout + again.stderr, again.stderr
    assert "--command NAME" not in again.stdout + again.stderr
    unknown = phasegate(repo, "run", "k2", "--command", "ship")
    assert unknown.returncode == 2
    assert "has no command 'ship'" in unknown.stderr
