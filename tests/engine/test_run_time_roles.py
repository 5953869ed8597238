"""Agents chosen at run time, review timeouts and gate timeouts read from the item's data:
the engine features the implement workflow (seed 004) builds on, on a workflow of their own."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import init_repo

from phasegate import plugins
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.calls import Backends
from phasegate.engine.plugin_api import PluginContext, ReviewerSelector, Selection
from phasegate.engine.recorded import RecordedCalls
from phasegate.engine.runner import RunOptions
from phasegate.errors import WaitingForHuman

RELAY = """
name: relay
items_dir: work
modes: {standard: {max_iterations: 2}}
roles:
  writer: {access: write}
  checker: {access: read-only}
nodes:
  - id: draft
    executor: writer
    executor_selector: pick-writer
    prompt: draft.md
    reviewers:
      - role: checker
        selector: pick-checker
        prompt: check.md
        reader: fuzzy
        timeout: check_seconds
        on_timeout: timed-out
        on: {APPROVED: pass, NEEDS_REVISION: revise, UNCLEAR: revise}
    on: {pass: done, timed-out: late}
  - id: late
    kind: gate
    question: The check ran out of time.
    choices: {go: {to: done}}
    timeout: {minutes: late_minutes, choice: go}
  - id: done
    kind: end
"""


class Always(ReviewerSelector):
    def __init__(self, role: str) -> None:
        self.role = role

    def select(self, ctx: PluginContext, settings: Mapping[str, Any]) -> Selection:
        return Selection(role=self.role, reason=f"{self.role} is on duty")


plugins.register("selectors", "pick-writer", Always("alice"))
plugins.register("selectors", "pick-checker", Always("bob"))


def relay_repo(root: Path) -> Repo:
    init_repo(root)
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "relay").mkdir(parents=True)
    (folder / "relay.yaml").write_text(RELAY)
    (folder / "prompts" / "relay" / "draft.md").write_text("Write notes.txt.\n")
    (folder / "prompts" / "relay" / "check.md").write_text("Check notes.txt.\n")
    return Repo(root, Config.model_validate({"retries": {"agent": 1}}))


def backend(*replies: Mapping[str, Any]) -> ScriptedBackend:
    def answer(request: AgentRequest) -> ScriptedReply:
        cycle = int(request.labels.get("iteration", "1"))
        return ScriptedReply.from_mapping(replies[min(cycle, len(replies)) - 1], "relay")

    return ScriptedBackend(handler=answer, structured_output=False)


def events(root: Path, name: str) -> list[dict[str, Any]]:
    lines = (root / "work" / "one" / ".journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def test_a_selected_agent_plays_its_role_on_that_roles_backend(tmp_path: Path) -> None:
    """executor_selector picks the agent who plays `executor`; a reviewer's selector picks who
    plays its `role`; each runs on the backend bound to the role it plays."""
    repo = relay_repo(tmp_path / "repo")
    repo.new("one", workflow="relay", data={"check_seconds": 30})
    writers = backend({"write": {"notes.txt": "n\n"}})
    checkers = backend({"text": "APPROVED"})
    outcome = repo.run("one", backends={"writer": writers, "checker": checkers})
    assert outcome.status == "completed"
    assert [(r.role, r.labels["plays"]) for r in writers.requests] == [("alice", "writer")]
    assert [(r.role, r.labels["plays"]) for r in checkers.requests] == [("bob", "checker")]
    (chosen,) = events(tmp_path / "repo", "executor.selected")
    assert (chosen["role"], chosen["plays"], chosen["reason"]) == (
        "alice",
        "writer",
        "alice is on duty",
    )


def test_an_agent_bound_in_the_config_uses_its_own_backend() -> None:
    """A binding of the agent's own wins; without one it gets the role it plays, then default."""
    config = Config.model_validate(
        {
            "roles": {
                "default": {"backend": "codex"},
                "writer": {"backend": "claude"},
                "alice": {"backend": "gemini"},
            }
        }
    )
    backends = Backends(config, Path("."))
    assert backends.describe("alice", "writer") == "gemini"
    assert backends.describe("carol", "writer") == "claude"
    assert backends.describe("carol", "checker") == "codex"


def test_a_review_past_its_timeout_ends_with_on_timeout_and_is_not_retried(
    tmp_path: Path,
) -> None:
    """A reviewer with on_timeout that runs out of time (its limit read from the item's data)
    is not tried again: the node ends with on_timeout, journaled as the call's result."""
    repo = relay_repo(tmp_path / "repo")
    repo.new("one", workflow="relay", data={"check_seconds": 0.2})
    checkers = backend({"sleep": 5, "text": "APPROVED"})
    with pytest.raises(WaitingForHuman, match="The check ran out of time"):
        repo.run("one", backends={"writer": backend({"write": {"a": "1"}}), "checker": checkers})
    assert len(checkers.requests) == 1 and checkers.requests[0].timeout == 0.2
    (timeout,) = events(tmp_path / "repo", "review.timeout")
    assert (timeout["role"], timeout["action"]) == ("bob", "timed-out")
    finished = [e for e in events(tmp_path / "repo", "agent.finished") if e["role"] == "bob"]
    assert [(e["ok"], e.get("timed_out"), e.get("final")) for e in finished] == [
        (False, True, True)
    ]


def test_a_final_timed_out_result_is_recovered_like_an_answer() -> None:
    """A timed-out call the node handles is a recorded result: a resume reuses it."""
    recorded = RecordedCalls(
        [
            {"event": "agent.finished", "key": "k1", "attempt": "a", "ok": False, "final": True},
            {"event": "agent.finished", "key": "k2", "attempt": "b", "ok": False},
        ]
    )
    assert recorded.result("k1") is not None
    assert recorded.result("k2") is None


def test_a_gate_timeout_is_read_from_the_items_data(tmp_path: Path) -> None:
    """GateTimeout.minutes naming a data value: the gate takes its choice once that passed."""
    repo = relay_repo(tmp_path / "repo")
    repo.new("one", workflow="relay", data={"check_seconds": 0.2, "late_minutes": 0.01})
    agents = {"writer": backend({"write": {"a": "1"}}), "checker": backend({"sleep": 5})}
    outcome = repo.run("one", backends=agents, options=RunOptions(wait=True))
    assert outcome.status == "completed"
    (answered,) = [e for e in events(tmp_path / "repo", "decision") if e["id"] == "late"]
    assert (answered["answer"], answered["by"]) == ("go", "timeout")


def test_a_gate_whose_timeout_value_is_missing_never_times_out(tmp_path: Path) -> None:
    """No value (or 0) in the item's data: the gate waits for a person."""
    repo = relay_repo(tmp_path / "repo")
    repo.new("one", workflow="relay", data={"check_seconds": 0.2})
    agents = {"writer": backend({"write": {"a": "1"}}), "checker": backend({"sleep": 5})}
    with pytest.raises(WaitingForHuman):
        repo.run("one", backends=agents)
