"""The merged work of parallel items meets a file deleted in the work tree meanwhile (a
conflict without markers): a person who keeps the deletion says so with ``git rm`` and the
next run goes on; running again without deciding still stops."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import git
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.errors import BlockedError

TASKS = "# Tasks\n\n- [ ] T1: One\n- [ ] T2: Two\n"


def test_a_deletion_kept_with_git_rm_lets_the_run_go_on(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    (root / "old.py").write_text("OLD = 1\n")
    git(root, "add", "old.py")
    git(root, "commit", "-q", "-m", "old")
    new_item(root)

    def special(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") == "T1":
            (root / "old.py").unlink(missing_ok=True)  # a person deletes it meanwhile
            return ScriptedReply(write={"old.py": "OLD = 2\n"})
        return None

    agents = Agents(delay=0.0, tasks=TASKS, special=special)
    with pytest.raises(BlockedError, match=r"conflicts with it in old\.py") as stopped:
        run(root, agents)
    assert "git rm" in str(stopped.value)
    with pytest.raises(BlockedError, match=r"old\.py"):
        run(root, agents)  # nothing decided yet
    git(root, "rm", "-q", "old.py")
    assert run(root, agents).status == "completed"
    assert not (root / "old.py").exists()
    assert (root / "src" / "T2.py").exists()
    assert ITEM not in git(root, "for-each-ref", "refs/phasegate/")
