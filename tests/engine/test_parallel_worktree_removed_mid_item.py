"""A parallel item's worktree removed by hand while its agent works there: the run stops
with one line saying what happened (not git's complaint about ignored files) and how to go
on; the next run does not make it again silently (the item "done" without its work)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.errors import AgentError, BlockedError

TASKS = "# Tasks\n\n- [ ] T1: One\n- [ ] T2: Two\n"


def test_a_worktree_removed_while_its_agent_works_is_named(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    removed: list[Path] = []

    def special(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") == "T2" and not removed:
            shutil.rmtree(request.workdir)  # someone cleans up .phasegate/worktrees
            removed.append(request.workdir)
        return None

    agents = Agents(delay=0.0, tasks=TASKS, special=special)
    with pytest.raises(BlockedError) as stopped:
        run(root, agents)
    message = str(stopped.value)
    assert "\n" not in message
    assert "ignored" not in message
    where = removed[0]
    assert f"{where} was removed while T2 was under way" in message
    assert f"phasegate run {ITEM}" in message
    # Run again without going that way: stopped the same way, T2 not taken as done.
    with pytest.raises(BlockedError) as again:
        run(root, agents)
    assert f"{where} was removed while T2 was under way" in str(again.value)
    steps = message.split("(", 1)[1].split(")", 1)[0]
    for step in steps.split("; "):
        subprocess.run(shlex.split(step), cwd=root, check=True, capture_output=True)
    assert run(root, agents).status == "completed"
    assert (root / "src" / "T1.py").exists()
    assert (root / "README.md").read_text() == "# sample\n"  # nothing else counted as deleted


def test_a_worktree_removed_between_runs_is_not_made_again_silently(tmp_path: Path) -> None:
    """An item waiting on a person when its worktree is removed (a clean-up of
    .phasegate/worktrees): the next run says what was lost instead of going on in a fresh
    worktree as if nothing happened."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)

    def special(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") == "T2":
            return ScriptedReply(write={"src/T2.py": "# T2\n"}, exit_status=1, error="broke")
        return None

    agents = Agents(delay=0.0, tasks=TASKS, special=special)
    with pytest.raises(AgentError):  # T2's agent fails: the run stops
        run(root, agents)
    where = root / ".phasegate" / "worktrees" / f"{ITEM}--tasks--T2"
    assert where.is_dir()
    shutil.rmtree(where)
    agents.special = None
    with pytest.raises(BlockedError) as stopped:
        run(root, agents)
    assert f"{where} was removed while T2 was under way" in str(stopped.value)
    assert not where.exists()
