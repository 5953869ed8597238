"""A reviewer made to answer in a schema that answers in free text: unclear, on every backend.

The engine hands the verdict schema to backends that enforce it (the scripted
backend standing in for one, the openai backend's JSON mode, claude's
``--json-schema``, codex's ``--output-schema``). Whatever such a reviewer says
in prose instead, even ``APPROVED`` alone on its first line, is recorded as
an unclear verdict and never approved; the backends agree on this.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import (
    claude_settings,
    codex_settings,
    init_git_repo,
    openai_settings,
)

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import read_meta

from phasegate.agents.base import Backend
from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.testing import Reply, Script, StubLLMServer

ITEM_DIR = Path("docs/features/item")
FREE_TEXT = "APPROVED\nThe brainstorm states the problem and the options."
EXECUTOR = {
    "executor": {"brainstorm": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\nideas\n"}}]}
}

Settings = Callable[[StubLLMServer, Path], dict[str, Any]]
BACKENDS: dict[str, Settings | None] = {
    "scripted": None,
    "openai": lambda stub, home: openai_settings(stub),
    "claude": claude_settings,
    "codex": codex_settings,
}


def _review_brainstorm(root: Path, backend: str, home: Path, request: Any) -> dict[str, Any]:
    """Run brainstorm (hotfix: one review) with a scripted executor and ``backend`` reviewing."""
    if backend in ("claude", "codex"):
        request.getfixturevalue(f"{backend}_bin")  # skips when the CLI is not installed
    init_git_repo(root)
    executor = ScriptedBackend(script=EXECUTOR)
    overrides: dict[str, Backend] = {"executor": executor}
    settings = BACKENDS[backend]
    with StubLLMServer(Script(default=Reply(text=FREE_TEXT))) as stub:
        if settings is None:
            overrides["chain-reviewer"] = ScriptedBackend(
                script={"chain-reviewer": {"*": [{"text": FREE_TEXT}]}}
            )
            config: dict[str, Any] = {}
        else:
            config = {
                "roles": {"default": {"backend": backend}},
                "backends": {backend: settings(stub, home)},
            }
        repo = Repo(root, Config.model_validate({"retries": {"agent": 0}, **config}))
        repo.new("item", mode="hotfix", description="Add rate limiting")
        repo.run("item", backends=overrides, options=RunOptions(until="brainstorm"))
        if settings is not None:
            assert stub.model_requests(), "the reviewer never reached the stub"
    return read_meta(root / ITEM_DIR)


@pytest.mark.cli_e2e
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_free_text_under_an_enforced_schema_is_unclear_never_approved(
    backend: str, home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Free text from a reviewer asked for structured output is recorded as unclear and never
    approves, the same for every backend that enforces the schema."""
    root = tmp_path / "repo"
    state = _review_brainstorm(root, backend, home, request)
    (record,) = [i for i in state["engine"]["iterations"] if i["phase"] == "brainstorm"]
    assert (record["approved"], record["unclear"], record["source"]) == (False, True, "unclear")
    assert "free text" in record["issues"][0]["description"]
    assert state["phases"]["brainstorm"]["review"] == "concerns"
    lines = (root / ITEM_DIR / ".journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    (verdict,) = [e for e in events if e["event"] == "review.verdict"]
    assert (verdict["verdict"], verdict["approved"], verdict["unclear"]) == ("UNCLEAR", False, True)
    finished = [e for e in events if e["event"] == "agent.finished" and e["role"] != "executor"]
    assert [e["ok"] for e in finished] == [True]  # an answer, read as unclear: not a failure
