"""With agents slower than the coalescing window (every real agent), the steps of the walk
are committed together before each agent call: one state commit per call, whatever the
number of steps between two calls, and the state file shows the call's node while the
agent works."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import init_repo, loop_workflow, make_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.engine.index import index_path
from phasegate.engine.state import read_state_file

WORKFLOW = loop_workflow(3)


def _index_entries(root: Path) -> int:
    """State commits made so far: each appends the item's brief to the item index."""
    lines = index_path(root).read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.startswith('{"item": "loop/demo"'))


def test_one_state_commit_per_agent_call_and_the_state_shows_the_node_at_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commit-every-step mode (``PHASEGATE_COALESCE_SECONDS=0``): between two agent calls
    the walk takes several steps (record a verdict, conclude the node, move on, start
    the next node); they cost one commit together, made before the next call."""
    monkeypatch.setenv("PHASEGATE_COALESCE_SECONDS", "0")
    root = init_repo(tmp_path / "repo")
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "loop").mkdir(parents=True)
    (folder / "prompts" / "loop" / "executor.md").write_text("Write {{ artifact_path }}.\n")
    (folder / "prompts" / "loop" / "reviewer.md").write_text("Review {{ phase }}.\n")
    (folder / "loop.yaml").write_text(WORKFLOW)
    repo = make_repo(root)
    repo.new("demo", workflow="loop", description="Add a greeting")
    item = repo.item("demo")
    commits: list[int] = []
    seen: list[tuple[Any, Any, str]] = []

    def agent(request: AgentRequest) -> ScriptedReply:
        commits.append(_index_entries(root))
        engine = read_state_file(item.item_dir / ".engine.json").to_dict()
        node = engine["nodes"].get(request.labels["path"]) or {}
        seen.append((engine["at"], node.get("started") is not None, request.labels["path"]))
        phase = request.labels["phase"]
        iteration = int(request.labels["iteration"])
        if request.role == "executor":
            return ScriptedReply(write={f"{{item_dir}}/{phase}.md": f"# {phase} {iteration}\n"})
        approved = iteration >= 2
        issues = [] if approved else [{"severity": "major", "description": "more"}]
        return ScriptedReply(structured={"approved": approved, "issues": issues, "summary": "s"})

    backend = ScriptedBackend(handler=agent)
    assert repo.run("demo", backends={"default": backend}).status == "completed"
    assert len(commits) == 12
    between = [later - earlier for earlier, later in itertools.pairwise(commits)]
    assert between == [1] * len(between), str(
        [(s[2], c) for s, c in zip(seen, commits, strict=True)]
    )
    for at, started, path in seen:
        assert (at, started) == (path, True)


def test_after_fast_calls_a_slow_one_is_shown_once_it_outlasts_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Group commit holds the steps back while agents answer fast; when the next call is
    slow, the held-back commit is written once the call outlasts the window, so the
    state file shows the node at work (it used to show the earlier node until the slow
    call returned)."""
    monkeypatch.setenv("PHASEGATE_COALESCE_SECONDS", "0.1")
    root = init_repo(tmp_path / "repo")
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "loop").mkdir(parents=True)
    (folder / "prompts" / "loop" / "executor.md").write_text("Write {{ artifact_path }}.\n")
    (folder / "prompts" / "loop" / "reviewer.md").write_text("Review {{ phase }}.\n")
    (folder / "loop.yaml").write_text(WORKFLOW)
    repo = make_repo(root)
    repo.new("demo", workflow="loop", description="Add a greeting")
    item = repo.item("demo")
    shown: list[tuple[Any, bool]] = []

    def on_disk(path: str) -> tuple[Any, bool]:
        engine = read_state_file(item.item_dir / ".engine.json").to_dict()
        return engine["at"], (engine["nodes"].get(path) or {}).get("started") is not None

    def agent(request: AgentRequest) -> ScriptedReply:
        phase = request.labels["phase"]
        path = request.labels["path"]
        if request.role == "executor" and phase == "p3":
            # The slow call: it waits (at most 10 s) for the state file to show it.
            deadline = time.monotonic() + 10
            while on_disk(path) != (path, True) and time.monotonic() < deadline:
                time.sleep(0.05)
            shown.append(on_disk(path))
        if request.role == "executor":
            return ScriptedReply(write={f"{{item_dir}}/{phase}.md": f"# {phase}\n"})
        return ScriptedReply(structured={"approved": True, "issues": [], "summary": "s"})

    backend = ScriptedBackend(handler=agent)
    assert repo.run("demo", backends={"default": backend}).status == "completed"
    assert shown == [("p3", True)]
