"""A role's ``tools`` in ``.phasegate/config.yaml`` reaches that role's Claude Code calls only.

The feature workflow's brainstorm phase, both roles on the real Claude Code
against the stub, the config read from the repository's file as a user writes
it: the stub's request log shows which tools each role's model was offered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend_helpers import APPROVE, claude_settings, init_git_repo

from phasegate.api import open_repo
from phasegate.engine.runner import RunOptions
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer

pytestmark = pytest.mark.cli_e2e

BRAINSTORM = Path("docs/features/item/brainstorm.md")


def test_a_roles_tools_in_config_yaml_are_what_its_model_is_offered(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    """``roles.executor.tools: [Read, Write]``: the executor's model is offered exactly Read
    and Write, not Edit; the reviewer keeps the read-only set."""
    root = init_git_repo(tmp_path / "repo")

    def model(request: LoggedRequest) -> Reply:
        if request.schema:
            return Reply.json(APPROVE)
        if not request.tool_result:
            return Reply.tool("Write", file_path=str(root / BRAINSTORM), content="# Ideas\n")
        return Reply(text="Wrote brainstorm.md")

    with StubLLMServer(Script(anthropic=[model])) as stub:
        config = {
            "retries": {"agent": 0},
            "roles": {
                "default": {"backend": "claude"},
                "executor": {"backend": "claude", "tools": ["Read", "Write"]},
            },
            "backends": {"claude": claude_settings(stub, home)},
        }
        (root / ".phasegate").mkdir()
        (root / ".phasegate" / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
        repo = open_repo(root)
        repo.new("item", mode="hotfix", description="Add rate limiting")
        outcome = repo.run("item", options=RunOptions(until="brainstorm"))
        executor, _, reviewer = stub.model_requests("anthropic")
    assert outcome.status != "failed"
    assert (root / BRAINSTORM).read_text() == "# Ideas\n"
    assert sorted(executor.tools) == ["Read", "Write"]
    assert not executor.schema and reviewer.schema
    assert sorted(reviewer.tools) == ["Glob", "Grep", "Read", "StructuredOutput"]
