"""A tool call Claude's permissions denied is shown by ``phasegate logs``: the tool and
the path it was given, as the journal records it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from backend_helpers import claude_settings, init_git_repo

from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer

pytestmark = pytest.mark.cli_e2e

ITEM_DIR = Path("docs/features/item")


def test_logs_show_a_denied_write_with_its_path(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    root = init_git_repo(tmp_path / "repo")
    outside = tmp_path / "outside.txt"
    brainstorm = root / ITEM_DIR / "brainstorm.md"
    script = Script(
        anthropic=[
            Rule(
                Reply.tool("Write", file_path=str(outside), content="x"),
                Match(tool_result=False),
            ),
            Rule(
                Reply.tool("Write", file_path=str(brainstorm), content="# Brainstorm\nideas\n"),
                Match(tool_result=True),
            ),
            Rule(Reply(text="done"), Match(tool_result=True), times=None),
        ]
    )
    with StubLLMServer(script) as stub:
        config = {
            "retries": {"agent": 0},
            "roles": {"default": {"backend": "claude"}},
            "backends": {"claude": claude_settings(stub, home)},
        }
        repo = Repo(root, Config.model_validate(config))
        repo.new("item", description="Add rate limiting")
        repo.run("item", options=RunOptions(until="brainstorm", no_review=True))
    assert not outside.exists()
    journal = [
        json.loads(line)
        for line in (root / ITEM_DIR / ".journal.jsonl").read_text().splitlines()
        if line.strip()
    ]
    (finished,) = [e for e in journal if e["event"] == "agent.finished"]
    note = f"permission denied for: Write {outside}"
    assert note in finished["stderr"]
    logs = subprocess.run(
        [sys.executable, "-m", "phasegate", "logs", "item"],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert logs.returncode == 0, logs.stderr
    assert note in logs.stdout, logs.stdout
