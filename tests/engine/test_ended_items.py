"""An item that reached an end node has nothing left to run: running it again says how
it ended, writes nothing and calls nothing (an end marked ``blocked`` is reported as
blocked again, exit 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import init_repo

from phasegate.api import Repo, open_repo
from phasegate.engine.runner import RunOptions
from phasegate.errors import BlockedError, ExitCode

WORKFLOW = """\
name: halting
items_dir: work
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    question: Go on or halt?
    choices: {go: {to: done}, halt: {to: halted}, drop: {to: dropped}}
  - id: halted
    kind: end
    status: blocked
    message: Halted by a person.
  - id: dropped
    kind: end
    status: stopped
  - id: done
    kind: end
"""


def _with_workflow(tmp_path: Path, name: str, text: str, prompts: tuple[str, ...] = ()) -> Path:
    """A repository holding the workflow ``name`` (``text``) and its prompt templates."""
    root = init_repo(tmp_path / "repo")
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / name).mkdir(parents=True)
    (folder / f"{name}.yaml").write_text(text)
    for prompt in prompts:
        (folder / "prompts" / name / prompt).write_text(f"{prompt}\n")
    return root


def _repo(tmp_path: Path) -> Repo:
    return Repo(_with_workflow(tmp_path, "halting", WORKFLOW))


def _files(repo: Repo, name: str) -> dict[str, bytes]:
    folder = repo.root / "work" / name
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_an_item_ended_blocked_is_blocked_again_and_left_as_it_was(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    repo.new("x", workflow="halting", description="x")
    with pytest.raises(BlockedError, match="Halted by a person"):
        repo.run("x", options=RunOptions(answers={"ask": "halt"}))
    before = _files(repo, "x")
    with pytest.raises(BlockedError) as again:
        repo.run("x")
    assert str(again.value) == "x ended blocked at halted; nothing to run"
    assert again.value.exit_code == ExitCode.BLOCKED
    assert _files(repo, "x") == before


def test_an_item_ended_stopped_says_so_and_is_left_as_it_was(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    repo.new("y", workflow="halting", description="y")
    first = repo.run("y", options=RunOptions(answers={"ask": "drop"}))
    assert first.state.status == "stopped"
    before = _files(repo, "y")
    again = repo.run("y", options=RunOptions(phase="ask"))
    expected = "y already ended at dropped (stopped); nothing to run"
    assert (again.status, again.message) == ("stopped", expected)
    assert _files(repo, "y") == before


LOOP = """\
name: looping
items_dir: loops
modes: {standard: {max_iterations: 1}}
roles: {dev: {access: write}}
nodes:
  - id: plan
    executor: dev
    prompt: plan.md
    outputs: [{file: plan.md, parser: markdown-tasks}]
  - id: tasks
    kind: foreach
    items: {parser: markdown-tasks, file: plan.md}
    body:
      - id: work
        executor: dev
        prompt: work.md
        checks: [{name: f, run: "false"}]
      - id: task-done
        kind: end
  - id: done
    kind: end
"""


def test_an_item_blocked_inside_a_loop_is_shown_blocked_not_running(tmp_path: Path) -> None:
    """A task whose check keeps failing stops the run (exit 4): status then says the item
    is blocked, and why, and lists the task as failed, not as running."""
    root = _with_workflow(tmp_path, "looping", LOOP, ("plan.md", "work.md"))
    (root / ".phasegate" / "config.yaml").write_text("roles:\n  default: {backend: auto}\n")
    repo = open_repo(root)
    repo.new("z", workflow="looping", description="z")
    with pytest.raises(BlockedError, match=r"tasks\[.*\]/work ended checks-failed"):
        repo.run("z")
    status = repo.status("z")
    assert status["blocked"] is not None and "check 'f' (false) failed" in status["blocked"]
    assert status["nextCommand"] == "fix the block, then: phasegate run z"
    (task,) = status["phases"][1]["items"]
    assert task["status"] == "failed"
    assert "checks-failed" in task["reason"]
