"""The merged work of a parallel foreach put into a work tree that was changed while its
items ran: what can be put in is, a file changed on both sides is merged with conflict
markers, and the run goes on once the person has resolved them."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import git
from parallel_helpers import Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.errors import BlockedError

TASKS = "- [ ] T1: Edit common\n- [ ] T2: New file\n"


def edited_meanwhile(root: Path) -> Agents:
    """T1 changes common.txt in its worktree while the person changes the same line of it,
    and adds a line of notes.txt, in the work tree."""

    def special(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") == "T1":
            (root / "common.txt").write_text("line1\nUSER\nline3\n")
            (root / "notes.txt").write_text("notes\nmore notes\n")
            return ScriptedReply(
                write={"common.txt": "line1\nT1\nline3\n", "notes.txt": "T1 notes\nnotes\n"}
            )
        return None

    return Agents(tasks=TASKS, delay=0.0, special=special)


def test_merged_work_is_merged_into_a_work_tree_changed_meanwhile(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", parallel=2)
    (root / "common.txt").write_text("line1\nline2\nline3\n")
    (root / "notes.txt").write_text("notes\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    new_item(root)
    with pytest.raises(BlockedError) as blocked:
        run(root, edited_meanwhile(root))
    message = str(blocked.value)
    assert "\n" not in message
    assert "conflicts with it in common.txt" in message
    assert "notes.txt" not in message
    assert "then run again: phasegate run fan-one" in message
    # Changes on one side only are put in; both sides of the conflict are kept.
    assert (root / "src" / "T2.py").read_text() == "# T2\n"
    assert (root / "notes.txt").read_text() == "T1 notes\nnotes\nmore notes\n"
    common = (root / "common.txt").read_text()
    assert "<<<<<<< work tree\nUSER\n=======\nT1\n>>>>>>> parallel items\n" in common
    # Markers still there: still blocked, nothing applied twice.
    with pytest.raises(BlockedError, match=r"in common\.txt"):
        run(root, Agents(tasks=TASKS, delay=0.0))
    assert (root / "notes.txt").read_text() == "T1 notes\nnotes\nmore notes\n"
    # Resolved: the item goes on and completes.
    (root / "common.txt").write_text("line1\nUSER\nT1\nline3\n")
    outcome = run(root, Agents(tasks=TASKS, delay=0.0))
    assert outcome.status == "completed", outcome.message
    assert (root / "common.txt").read_text() == "line1\nUSER\nT1\nline3\n"
    assert "phasegate-tasks" not in git(root, "branch")
