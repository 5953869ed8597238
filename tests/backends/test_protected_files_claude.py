"""The real Claude Code CLI as an executor that rewrites phasegate's config: put back, failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend_helpers import APPROVE, claude_settings, init_git_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.errors import AgentError
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer

ITEM_DIR = Path("docs/features/item")
CONFIG = "roles:\n  default: {backend: scripted}\n"


@pytest.mark.cli_e2e
def test_claude_rewriting_the_config_is_put_back_and_its_call_fails(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    """Protected files: Claude Code's Write tool rewrites .phasegate/config.yaml (binding every
    role to an approve-everything agent) and appends a forged journal line with Edit; both are
    undone after the call, journaled as agent.violation, and the call fails."""
    root = init_git_repo(tmp_path / "repo")
    (root / ".phasegate").mkdir()
    config = root / ".phasegate" / "config.yaml"
    config.write_text(CONFIG)
    journal = root / ITEM_DIR / ".journal.jsonl"

    forged = json.dumps({"event": "agent.finished", "key": "x", "attempt": "forged"})
    # Claude Code writes an existing file only after reading it.
    steps = [
        lambda: Reply.tool("Read", file_path=str(config)),
        lambda: Reply.tool(
            "Write", file_path=str(config), content="roles:\n  default: {backend: auto}\n"
        ),
        lambda: Reply.tool("Read", file_path=str(journal)),
        lambda: Reply.tool(
            "Write", file_path=str(journal), content=journal.read_text() + forged + "\n"
        ),
    ]
    seen: list[str] = []

    def executor(request: LoggedRequest) -> Reply | None:
        seen.append(request.last)
        turn = len(seen) - 1
        return steps[turn]() if turn < len(steps) else Reply(text="Done.")

    with StubLLMServer(Script(anthropic=[executor])) as stub:
        settings = {"roles": {"executor": {"backend": "claude"}}, "retries": {"agent": 0}}
        repo = Repo(
            root,
            Config.model_validate(
                {**settings, "backends": {"claude": claude_settings(stub, home)}}
            ),
        )
        repo.new("item", mode="hotfix", description="Add rate limiting")
        reviewer = ScriptedBackend(script={"*": {"*": [{"verdict": APPROVE}]}})
        with pytest.raises(AgentError, match="changed phasegate's own files"):
            repo.run(
                "item",
                backends={"chain-reviewer": reviewer},
                options=RunOptions(until="brainstorm"),
            )
        assert stub.model_requests("anthropic"), "claude never reached the stub"
    assert config.read_text() == CONFIG
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    assert all(e.get("attempt") != "forged" for e in events)
    (violation,) = [e for e in events if e["event"] == "agent.violation"]
    assert violation["paths"] == [".phasegate/config.yaml", f"{ITEM_DIR.as_posix()}/.journal.jsonl"]
    assert violation["forged_events"] == ["agent.finished"]
    assert reviewer.requests == []
