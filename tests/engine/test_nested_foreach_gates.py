"""A gate in a foreach inside a foreach: each inner item of each outer item is asked.

The user's workflow loops over the tasks of plan.md and, for each task, over the
steps of its own steps file; a gate in the inner body asks ``sure-{{ task }}``.
Step 1 of T1 and step 1 of T2 are two decisions: answering the first must not
let the second through unasked, and a kill after an answer is persisted resumes
without asking it again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crash_helpers import KILLED

from cli_process import cli_in_process, run_cli

WORKFLOW = """\
name: nested-gates
description: A step gate inside a loop inside a loop.
items_dir: work
default_mode: standard
modes:
  standard: {max_iterations: 1, description: The only mode}
roles:
  planner: {description: Writes the plan and each task's steps., access: write}
nodes:
  - id: plan
    executor: planner
    prompt: plan.md
    outputs: [plan.md]
    on: {pass: tasks}
  - id: tasks
    kind: foreach
    items: {parser: markdown-tasks, file: plan.md}
    body:
      - id: steps
        kind: foreach
        items: {parser: markdown-tasks, file: "steps-{{ task }}.md"}
        body:
          - id: sure
            kind: gate
            decision: "sure-{{ task }}"
            question: "Is step {{ task }} ({{ task_title }}) right?"
            choices:
              "yes": {to: step-done, description: the step is right}
          - id: step-done
            kind: end
      - id: task-done
        kind: end
  - id: done
    kind: end
"""


@pytest.fixture
def repo(git_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> Path:
    flows = git_repo / ".phasegate" / "workflows"
    flows.mkdir(parents=True)
    (flows / "nested-gates.yaml").write_text(WORKFLOW)
    prompts = git_repo / ".phasegate" / "prompts" / "nested-gates"
    prompts.mkdir(parents=True)
    (prompts / "plan.md").write_text("Plan {{ item }}.\n")
    steps = "# Steps\n\n- [ ] only step\n"
    writes = {"{item_dir}/plan.md": "# Plan\n\n- [ ] T1 one\n- [ ] T2 two\n"}
    writes |= {f"{{item_dir}}/steps-{task}.md": steps for task in ("T1", "T2")}
    (git_repo / ".phasegate" / "agents.yaml").write_text(
        json.dumps({"planner": {"plan": [{"write": writes}]}})
    )
    (git_repo / ".phasegate" / "config.yaml").write_text(
        json.dumps(
            {
                "roles": {"default": {"backend": "scripted"}},
                "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
            }
        )
    )
    monkeypatch.chdir(git_repo)
    code, _, err = cli_in_process(capsys, "new", "it", "--workflow", "nested-gates")
    assert code == 0, err
    return git_repo


def pending(repo: Path) -> list[str]:
    found = run_cli(repo, "decisions", "it", "--json")
    assert found.returncode == 0, found.stderr
    return [d["id"] for d in json.loads(found.stdout)]


def answered(repo: Path) -> list[tuple[str, str]]:
    lines = (repo / "work" / "it" / ".journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [(e["id"], e["choice"]) for e in events if e["event"] == "decision.answered"]


def test_the_same_inner_item_of_two_outer_items_is_asked_twice(repo: Path, capsys: Any) -> None:
    code, _, err = cli_in_process(capsys, "run", "it")
    assert code == 3, err
    (first,) = pending(repo)
    assert cli_in_process(capsys, "answer", "it", first, "yes")[0] == 0

    code, _, err = cli_in_process(capsys, "run", "it")
    # T2's step is a decision of its own: T1's answer does not let it through.
    assert code == 3, err
    assert "Is step 1 (only step) right?" in err
    (second,) = pending(repo)
    assert cli_in_process(capsys, "answer", "it", second, "yes")[0] == 0

    assert cli_in_process(capsys, "run", "it")[0] == 0
    # Each id names the outer item too, and each was answered once.
    assert answered(repo) == [("sure-T1.1", "yes"), ("sure-T2.1", "yes")]


def test_a_kill_after_an_inner_answer_is_persisted_does_not_ask_it_again(repo: Path) -> None:
    both = ("--answer", "sure-T1.1=yes", "--answer", "sure-T2.1=yes")
    crash = {"PHASEGATE_CRASH_AT": "gate.answered@2"}
    assert run_cli(repo, "run", "it", *both, env=crash).returncode == KILLED
    assert answered(repo) == [("sure-T1.1", "yes"), ("sure-T2.1", "yes")]
    # Resumed with no answers at all: both are on record, nothing is asked.
    done = run_cli(repo, "run", "it")
    assert done.returncode == 0, done.stderr
    assert answered(repo) == [("sure-T1.1", "yes"), ("sure-T2.1", "yes")]
    status = run_cli(repo, "status", "it")
    assert "completed" in status.stdout
