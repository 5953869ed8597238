"""A budget answer in a parallel loop is acted on for the call it was asked about."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from parallel_helpers import FOLDER, ITEM, fan_repo, new_item

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import open_repo
from phasegate.engine.runner import RunOptions
from phasegate.engine.state import read_state_file
from phasegate.errors import AgentError, BlockedError, WaitingForHuman

TASKS = "- [ ] T1: One\n- [ ] T2: Two\n- [ ] T3: Three\n"
CONFIG = "version: 1\nretries: {agent: 0}\nbudget:\n  roles: {coder: {usd: 0.05}}\n"


class Agents:
    """Coders spend $0.03 a call; T1's first review fails (its item is parked)."""

    def __init__(self, tasks: str = TASKS) -> None:
        self.tasks = tasks
        self.calls: list[tuple[str, str]] = []
        self.failed = False

    def handler(self, request: AgentRequest) -> ScriptedReply:
        task = request.labels.get("task", "")
        self.calls.append((request.role, task))
        if request.role == "planner":
            return ScriptedReply(write={"{item_dir}/tasks.md": self.tasks})
        if request.role == "reviewer":
            if task == "T1" and not self.failed:
                self.failed = True
                return ScriptedReply(exit_status=1, error="reviewer crashed")
            return ScriptedReply(structured={"approved": True, "summary": "ok", "issues": []})
        # Slow enough that the first two coder calls are both under way before either ends.
        return ScriptedReply(write={f"src/{task}.py": f"# {task}\n"}, cost_usd=0.03, sleep=0.3)

    def run(self, root: Path) -> Any:
        backend = ScriptedBackend(handler=self.handler)
        return open_repo(root).run(ITEM, backends={"default": backend}, options=RunOptions())


def listed(root: Path) -> dict[str, Any]:
    """The loop's items as ``status --json`` lists them, by key."""
    phases = open_repo(root).status(ITEM)["phases"]
    return {i["key"]: i for p in phases if p["node"] == "tasks" for i in p["items"]}


def engine_state(root: Path) -> dict:
    return read_state_file(root / FOLDER / ".engine.json").to_dict()


def test_a_stop_answer_is_not_used_up_by_another_items_call_the_cap_lets_through(
    tmp_path: Path,
) -> None:
    """T2's coder call is stopped at the coder cap and asked about; T1 is parked on a failed
    review. After ``answer budget stop`` the next run retries T1's review (no cap holds it)
    and stops T2 as answered (exit 4): the review used to take the stop answer as no
    longer needed, and T2 was asked the same question again (exit 3)."""
    root = fan_repo(tmp_path / "repo", parallel=2, config=CONFIG)
    new_item(root)
    agents = Agents("- [ ] T1: One\n- [ ] T2: Two\n")
    with pytest.raises(AgentError, match="reviewer crashed"):
        agents.run(root)
    assert engine_state(root)["decisions"]["budget"]["status"] == "pending"
    open_repo(root).answer(ITEM, "budget", "stop")
    with pytest.raises(BlockedError, match=r"as answered \(stop\)"):
        agents.run(root)
    assert [task for role, task in agents.calls if role == "coder"] == ["T1"]
    assert agents.calls.count(("reviewer", "T1")) == 2
    assert engine_state(root)["decisions"]["budget"]["status"] == "answered"
    lines = (root / FOLDER / ".journal.jsonl").read_text().splitlines()
    stopped = [e for e in map(json.loads, lines) if e.get("event") == "budget.stopped"]
    assert [e.get("node") for e in stopped] == ["tasks[T2]/code"]


def test_a_stop_answer_stops_every_item_the_cap_holds_without_asking_again(
    tmp_path: Path,
) -> None:
    """T2 and T3 are both held by the coder cap T1's call nearly spent. After ``stop`` the
    next run stops them both, calls no coder, and leaves no new budget question pending
    (T3 used to be asked again what was just answered)."""
    root = fan_repo(tmp_path / "repo", parallel=2, config=CONFIG)
    new_item(root)
    agents = Agents()
    agents.failed = True  # every review passes
    with pytest.raises(WaitingForHuman, match="budget"):
        agents.run(root)
    open_repo(root).answer(ITEM, "budget", "stop")
    with pytest.raises(BlockedError, match=r"as answered \(stop\)"):
        agents.run(root)
    assert [task for role, task in agents.calls if role == "coder"] == ["T1"]
    assert engine_state(root)["decisions"]["budget"]["status"] == "answered"


class Timed(Agents):
    """Agents that note how many coder calls were under way at once."""

    def __init__(self, tasks: str = TASKS) -> None:
        super().__init__(tasks)
        self.failed = True
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def handler(self, request: AgentRequest) -> ScriptedReply:
        if request.role != "coder":
            return super().handler(request)
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.3)
            return super().handler(request)
        finally:
            with self.lock:
                self.running -= 1


def test_the_first_calls_of_a_capped_role_wait_for_one_to_report_its_cost(
    tmp_path: Path,
) -> None:
    """Nothing estimates a role's call before one reports: in a parallel loop under a cap,
    the first coder call goes alone, and once it reported $0.03 of a $0.05 cap the others
    stop at the budget gate (they used to start all at once and spend $0.09). Once raised,
    the rest run at once again."""
    root = fan_repo(tmp_path / "repo", parallel=3, config=CONFIG)
    new_item(root)
    agents = Timed()
    with pytest.raises(WaitingForHuman, match="budget"):
        agents.run(root)
    assert [task for role, task in agents.calls if role == "coder"] == ["T1"]
    open_repo(root).answer(ITEM, "budget", "raise: 1")
    assert agents.run(root).status == "completed"
    assert sorted(task for role, task in agents.calls if role == "coder") == ["T1", "T2", "T3"]
    assert agents.most == 2  # T2 and T3 together: their estimate was known


def test_status_shows_every_item_held_by_an_answered_budget_question_as_answered(
    tmp_path: Path,
) -> None:
    """T2 and T3 both wait on the budget question (asked for T2's call). Once answered,
    ``status`` shows both answered, the next run acting on it; T3 used to stay shown
    waiting, with the command to answer a question already answered."""
    root = fan_repo(tmp_path / "repo", parallel=2, config=CONFIG)
    new_item(root)
    agents = Agents()
    agents.failed = True
    with pytest.raises(WaitingForHuman, match="budget"):
        agents.run(root)
    items = listed(root)
    assert {k: i["status"] for k, i in items.items()} == {
        "T1": "done",
        "T2": "waiting",
        "T3": "waiting",
    }
    open_repo(root).answer(ITEM, "budget", "raise")
    items = listed(root)
    for key in ("T2", "T3"):
        assert items[key]["status"] == "answered", key
        assert (items[key]["decision"], items[key]["answer"]) == ("budget", "raise")
