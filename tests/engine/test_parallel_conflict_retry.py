"""A person's ``retry`` answer to a merge conflict of parallel items asks the agent to
resolve it again: a new call each time (not the journaled answer of the earlier repair),
and one call with ``conflicts: {attempts: 0}``, whose question says no agent was asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from parallel_helpers import FOLDER, ITEM, Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.api import open_repo
from phasegate.errors import WaitingForHuman


def question(root: Path) -> str:
    state = json.loads((root / FOLDER / ".engine.json").read_text())
    return str(state["decisions"]["conflict-T2"]["question"])


def clashing(resolve_on: int) -> tuple[Agents, list[str]]:
    """T1 and T2 write the same line; the ``resolve_on``-th repair call resolves it."""
    repairs: list[str] = []
    agents = Agents(
        delay=0.0,
        files={"T1": {"src/shared.py": "RATE = 1\n"}, "T2": {"src/shared.py": "RATE = 2\n"}},
    )

    def special(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("stage") != "repair":
            return None
        repairs.append(request.labels.get("task", ""))
        if len(repairs) < resolve_on:
            return ScriptedReply(text="could not decide")
        return ScriptedReply(write={"src/shared.py": "RATE = 3\n"}, text="resolved")

    agents.special = special
    return agents, repairs


def test_retry_asks_the_agent_again(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", extra="    conflicts: {attempts: 1}\n")
    new_item(root)
    agents, repairs = clashing(resolve_on=2)
    with pytest.raises(WaitingForHuman, match="the agent did not resolve it"):
        run(root, agents)
    assert repairs == ["T2"]
    open_repo(root).answer(ITEM, "conflict-T2", "retry")
    assert run(root, agents).status == "completed"
    assert repairs == ["T2", "T2"]
    assert (root / "src" / "shared.py").read_text() == "RATE = 3\n"


def test_retry_with_no_attempts_asks_the_agent_once(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", extra="    conflicts: {attempts: 0}\n")
    new_item(root)
    agents, repairs = clashing(resolve_on=1)
    with pytest.raises(WaitingForHuman):
        run(root, agents)
    assert repairs == []
    asked = question(root)
    assert "no agent was asked to resolve it" in asked
    assert "the agent did not resolve it" not in asked
    open_repo(root).answer(ITEM, "conflict-T2", "retry")
    assert run(root, agents).status == "completed"
    assert repairs == ["T2"]
    assert (root / "src" / "shared.py").read_text() == "RATE = 3\n"
