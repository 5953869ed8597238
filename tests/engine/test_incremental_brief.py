"""The brief stored at every state commit (what ``phasegate status`` and the SessionStart
hook show) is kept up to date from the nodes that changed, and always equals the brief of
the item's full status at that commit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import init_repo, make_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.engine.runner import RunOptions
from phasegate.engine.state import EngineState
from phasegate.engine.status import brief


def test_stored_brief_equals_the_brief_of_the_full_status_at_every_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reviewers reject (open concerns, more iterations) and approve; at every agent call
    the brief in the state file equals ``brief(status)`` computed afresh from that file."""
    monkeypatch.setenv("PHASEGATE_COALESCE_SECONDS", "0")  # a commit at every call
    root = init_repo(tmp_path / "repo")
    repo = make_repo(root)
    repo.new("demo", description="Add a greeting")
    item = repo.item("demo")
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def agent(request: AgentRequest) -> ScriptedReply:
        raw = (item.item_dir / ".engine.json").read_bytes()
        state = EngineState.decode(raw, item.item_dir / ".engine.json")
        seen.append((json.loads(raw)["brief"], brief(item.status(state))))
        phase = request.labels["phase"]
        iteration = int(request.labels["iteration"])
        if request.role == "executor":
            artifact = "spec" if phase == "specify" else phase  # the file the next phase reads
            return ScriptedReply(write={f"{{item_dir}}/{artifact}.md": f"# {phase} {iteration}\n"})
        if iteration < 2 or phase == "brainstorm":  # brainstorm ends with concerns open
            issue = {"severity": "major", "description": f"{phase}: say more\nsecond line"}
            return ScriptedReply(structured={"approved": False, "issues": [issue], "summary": "no"})
        return ScriptedReply(structured={"approved": True, "issues": [], "summary": "ok"})

    backend = ScriptedBackend(handler=agent)
    repo.run("demo", backends={"default": backend}, options=RunOptions(until="design", yes=True))
    assert len(seen) >= 8
    for stored, fresh in seen:
        assert stored == fresh
    assert any(stored["concerns"] for stored, _ in seen)
    assert any(stored["inProgress"] for stored, _ in seen)
    final = repo.state("demo")
    assert final["brief"] == brief(item.status(final))
    assert final["brief"]["iterations"] > 0
