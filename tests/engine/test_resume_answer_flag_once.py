"""``run --answer ID=CHOICE`` killed after acting on it, then the same command again.

A run that stops says "run the same command again to resume": doing so must
not answer the gate's next visit with the flag the killed run already used
(that visit is asked). A flag given again while the next visit waits still
answers it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crash_helpers import KILLED

from cli_process import run_cli

WORKFLOW = """\
name: again
description: A gate that can send the item round again.
items_dir: work
default_mode: standard
modes:
  standard: {max_iterations: 1, description: The only mode}
roles:
  person: {description: Nobody is called; the gate asks a person., access: read-only}
nodes:
  - id: ask
    kind: gate
    decision: again
    question: Once more?
    choices:
      redo: {to: ask, description: round again}
      stop: {to: done, description: finish}
  - id: done
    kind: end
"""


@pytest.fixture
def repo(git_repo: Path) -> Path:
    flows = git_repo / ".phasegate" / "workflows"
    flows.mkdir(parents=True)
    (flows / "again.yaml").write_text(WORKFLOW)
    made = run_cli(git_repo, "new", "it", "--workflow", "again")
    assert made.returncode == 0, made.stderr
    return git_repo


def answers(repo: Path) -> list[tuple[int, str, str]]:
    lines = (repo / "work" / "it" / ".journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [(e["visit"], e["choice"], e["by"]) for e in events if e["event"] == "decision.answered"]


def test_the_same_command_after_a_kill_asks_the_next_visit(repo: Path) -> None:
    crash = {"PHASEGATE_CRASH_AT": "gate.answered"}
    assert run_cli(repo, "run", "it", "--answer", "again=redo", env=crash).returncode == KILLED
    assert answers(repo) == [(1, "redo", "flag")]

    resumed = run_cli(repo, "run", "it", "--answer", "again=redo")
    assert resumed.returncode == 3, resumed.stderr
    assert "phasegate answer it again" in resumed.stderr
    assert answers(repo) == [(1, "redo", "flag")]


def test_a_flag_given_again_while_the_next_visit_waits_answers_it(repo: Path) -> None:
    first = run_cli(repo, "run", "it", "--answer", "again=redo")
    assert first.returncode == 3, first.stderr
    assert answers(repo) == [(1, "redo", "flag")]

    second = run_cli(repo, "run", "it", "--answer", "again=stop")
    assert second.returncode == 0, second.stderr
    assert answers(repo) == [(1, "redo", "flag"), (2, "stop", "flag")]
