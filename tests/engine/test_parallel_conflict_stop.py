"""A parallel foreach's merge conflict answered ``stop``, or ``resolved`` when it is not:
the finished items are kept, the person is asked again, nothing piles up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import git
from parallel_helpers import FOLDER, ITEM, Agents, fan_repo, new_item, run, worktrees

from phasegate.api import open_repo
from phasegate.errors import BlockedError, WaitingForHuman


def clashing(tasks: str | None = None, files: dict | None = None) -> Agents:
    """T1 and T2 write the same lines; the repair agent never resolves anything."""
    agents = Agents(
        delay=0.05,
        files=files
        or {"T1": {"src/shared.py": "RATE = 10\n"}, "T2": {"src/shared.py": "RATE = 20\n"}},
    )
    if tasks is not None:
        agents.tasks = tasks

    def special(request):  # type: ignore[no-untyped-def]
        from phasegate.agents.scripted import ScriptedReply

        if request.labels.get("stage") == "repair":
            agents.calls.append(("repair", request.labels.get("task", "")))
            return ScriptedReply(text="could not decide")
        return None

    agents.special = special
    return agents


def coder_calls(agents: Agents, since: int = 0) -> list[str]:
    return [task for role, task in agents.calls[since:] if role == "coder"]


def decision(root: Path, name: str) -> dict:
    return json.loads((root / FOLDER / ".engine.json").read_text())["decisions"][name]


def test_stop_keeps_the_finished_items_and_the_next_run_asks_again(tmp_path: Path) -> None:
    """``stop`` blocks the item (exit 4) with one line saying what to resolve and where;
    the next run runs no item again, asks the same conflict anew (exit 3), and once it is
    resolved by hand every item's work reaches the work tree, with no worktree left."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = clashing()
    with pytest.raises(WaitingForHuman, match="conflict-T2"):
        run(root, agents)
    repo = open_repo(root)
    repo.answer(ITEM, "conflict-T2", "stop")
    before = len(agents.calls)
    with pytest.raises(BlockedError) as blocked:
        run(root, agents)
    message = str(blocked.value)
    assert "\n" not in message
    (where,) = [Path(w) for w in worktrees(root) if "conflict-" in w]
    assert "merging T2 stopped at a conflict in src/shared.py" in message
    assert f"Resolve it in {where}" in message and "phasegate run fan-one" in message
    assert coder_calls(agents, before) == []
    kept = worktrees(root)
    # Run again without resolving it: asked again, nothing is run again or added.
    with pytest.raises(WaitingForHuman, match="phasegate answer fan-one conflict-T2"):
        run(root, agents)
    assert decision(root, "conflict-T2")["status"] == "pending"
    assert coder_calls(agents, before) == []
    assert worktrees(root) == kept
    (where / "src" / "shared.py").write_text("RATE = 30\n")
    git(where, "add", "src/shared.py")
    repo.answer(ITEM, "conflict-T2", "resolved")
    assert run(root, agents).status == "completed"
    assert coder_calls(agents, before) == ["T4"]  # it waits for T2: it runs only now
    assert (root / "src" / "shared.py").read_text() == "RATE = 30\n"
    assert all((root / "src" / f"T{n}.py").exists() for n in (3, 4))
    assert worktrees(root) == []


def test_stop_never_overwrites_a_fix_made_in_the_work_tree(tmp_path: Path) -> None:
    """A person who fixes the file in the work tree instead of the conflict's worktree
    keeps their edit: the next run asks the conflict again and writes nothing there."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = clashing()
    with pytest.raises(WaitingForHuman):
        run(root, agents)
    open_repo(root).answer(ITEM, "conflict-T2", "stop")
    with pytest.raises(BlockedError):
        run(root, agents)
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "shared.py").write_text("RATE = 99\n")
    kept = worktrees(root)
    with pytest.raises(WaitingForHuman):
        run(root, agents)
    assert (root / "src" / "shared.py").read_text() == "RATE = 99\n"
    assert worktrees(root) == kept


def test_resolved_that_is_not_says_why_it_was_not_accepted(tmp_path: Path) -> None:
    """``resolved`` answered while the file is still unmerged (one side deleted it) or
    still holds markers: the question asked again says the answer was not accepted and
    why, not that the agent did not resolve it."""
    tasks = "# Tasks\n\n- [ ] T1: Delete shared\n- [ ] T2: Edit shared\n"
    root = fan_repo(tmp_path / "repo")
    (root / "shared.txt").write_text("base\n")
    (root / "marked.txt").write_text("base\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shared")
    new_item(root)

    def special(request):  # type: ignore[no-untyped-def]
        from phasegate.agents.scripted import ScriptedReply

        task = request.labels.get("task", "")
        if request.labels.get("stage") == "repair":
            return ScriptedReply(text="could not decide")
        if task == "T1":
            return ScriptedReply(delete=["shared.txt"], write={"marked.txt": "one\n"})
        return ScriptedReply(write={"shared.txt": "edited by T2\n", "marked.txt": "two\n"})

    agents = Agents(delay=0.05, tasks=tasks, special=special)
    with pytest.raises(WaitingForHuman):
        run(root, agents)
    question = decision(root, "conflict-T2")["question"]
    assert "the agent did not resolve it" in question
    open_repo(root).answer(ITEM, "conflict-T2", "resolved")
    with pytest.raises(WaitingForHuman):
        run(root, agents)
    asked = decision(root, "conflict-T2")
    assert asked["status"] == "pending"
    question = asked["question"]
    assert "the agent did not resolve it" not in question
    assert "'resolved' was not accepted" in question
    assert "marked.txt still holds conflict markers" in question
    assert "shared.txt is still unmerged" in question and "git add or git rm it" in question
