"""A merge conflict of parallel items whose merge was aborted in its worktree (by the
repair agent, or by hand) is not taken as resolved: the item's other work is never lost,
and the merge is started again there."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from engine_helpers import git
from parallel_helpers import FOLDER, ITEM, Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.api import open_repo
from phasegate.errors import WaitingForHuman

TASKS = "# Tasks\n\n- [ ] T1: One\n- [ ] T2: Two\n"


def question_of(root: Path) -> str:
    state = json.loads((root / FOLDER / ".engine.json").read_text())
    return str(state["decisions"]["conflict-T2"]["question"])


def aborting_agents() -> Agents:
    """T1 and T2 change the same line, T2 adds a file too; the repair agent aborts the
    merge and writes its own version of the conflicted file."""

    def special(request: AgentRequest) -> ScriptedReply | None:
        task = request.labels.get("task", "")
        if request.labels.get("stage") == "repair":
            subprocess.run(["git", "merge", "--abort"], cwd=request.workdir, check=False)
            return ScriptedReply(write={"src/shared.py": "RATE = 30\n"}, text="resolved")
        if task == "T1":
            return ScriptedReply(write={"src/shared.py": "RATE = 10\n"})
        return ScriptedReply(write={"src/shared.py": "RATE = 20\n", "src/extra.py": "X = 2\n"})

    return Agents(delay=0.05, tasks=TASKS, special=special)


def test_an_aborted_merge_is_not_taken_as_resolved(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = aborting_agents()
    # Before: the aborted merge was committed as the resolution, T2's src/extra.py lost.
    with pytest.raises(WaitingForHuman, match="conflict-T2"):
        run(root, agents)
    question = question_of(root)
    assert "was aborted" in question and "started again" in question
    where = Path(question.split("The merge is in ")[1].rstrip("."))
    assert "<<<<<<<" in (where / "src" / "shared.py").read_text()
    (where / "src" / "shared.py").write_text("RATE = 30\n")
    git(where, "add", "src/shared.py")
    open_repo(root).answer(ITEM, "conflict-T2", "resolved")
    assert run(root, agents).status == "completed"
    assert (root / "src" / "shared.py").read_text() == "RATE = 30\n"
    assert (root / "src" / "extra.py").read_text() == "X = 2\n"


def test_a_merge_committed_by_hand_and_amended_on_is_kept(tmp_path: Path) -> None:
    """A person who commits the resolved merge and then a fix on top of it keeps both:
    the next run takes that as the resolution, not a reason to start the merge again."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = aborting_agents()
    with pytest.raises(WaitingForHuman):
        run(root, agents)
    question = question_of(root)
    where = Path(question.split("The merge is in ")[1].rstrip("."))
    (where / "src" / "shared.py").write_text("RATE = 30\n")
    git(where, "add", "src/shared.py")
    git(where, "commit", "-q", "-m", "merged")
    (where / "src" / "shared.py").write_text("RATE = 31\n")
    git(where, "commit", "-q", "-am", "fix")
    open_repo(root).answer(ITEM, "conflict-T2", "resolved")
    assert run(root, agents).status == "completed"
    assert (root / "src" / "shared.py").read_text() == "RATE = 31\n"
    assert (root / "src" / "extra.py").read_text() == "X = 2\n"
