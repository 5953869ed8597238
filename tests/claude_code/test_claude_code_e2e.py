"""The real ``claude`` CLI in a repository after ``phasegate install claude-code``.

Claude Code runs the installed hooks itself; the stub LLM server's request
log shows what reached the model.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from claude_code_helpers import cli, init_repo, make_repo, new_item, run_item

from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer
from phasegate.testing.clis import base_env, claude_env, find_cli

pytestmark = pytest.mark.cli_e2e

CLAUDE_TIMEOUT = 90.0


@dataclass
class Session:
    """An installed repository with one work item, and where claude keeps its state."""

    root: Path
    home: Path
    claude: Path

    def run(
        self, stub: StubLLMServer, prompt: str, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {**base_env(self.home), **claude_env(stub.url, self.home / "claude-config")}
        argv = [str(self.claude), "-p", prompt, "--output-format", "json"]
        # acceptEdits: without the guard, the scripted edit would go through.
        argv += ["--permission-mode", "acceptEdits"]
        return subprocess.run(
            argv,
            cwd=cwd or self.root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLAUDE_TIMEOUT,
            check=False,
        )


@pytest.fixture
def session(tmp_path: Path) -> Session:
    """A repo with item rate-limit (in its worktree, specify done) and phasegate installed."""
    claude = find_cli("claude", Path(__file__).parent)
    if claude is None:
        pytest.skip("node_modules/.bin/claude is not installed (run `npm ci` at the repo root)")
    repo = make_repo(init_repo(tmp_path / "repo"))
    new_item(repo, "rate-limit", worktree=True, description="Add rate limiting")
    run_item(repo, "rate-limit", until="specify")
    # Off PATH, install writes the absolute path of this phasegate: what the hooks will run.
    installed = cli(repo.root, "install", "claude-code", env={"PATH": "/usr/bin:/bin"})
    assert installed.returncode == 0, installed.stderr
    home = tmp_path / "home"
    home.mkdir()
    return Session(repo.root, home, claude)


def test_session_start_context_reaches_the_model(session: Session) -> None:
    """Seed 000 §4: phase, next command and worktree warning reach the model's request."""
    with StubLLMServer(Script(default=Reply(text="noted"))) as stub:
        result = session.run(stub, "where do things stand?")
        (turn,) = stub.model_requests("anthropic")
    assert result.returncode == 0, result.stderr
    worktree = (session.root / ".phasegate/worktrees/rate-limit").resolve()
    assert "## rate-limit (workflow feature, mode standard)" in turn.text
    assert "- Phase: specify; next phase: design" in turn.text
    assert "- Next command: phasegate run rate-limit" in turn.text
    assert (
        f"WARNING: this session's directory {session.root.resolve()} is not the worktree of "
        f"work item rate-limit. Work on rate-limit belongs in {worktree}"
    ) in turn.text


def test_session_in_the_worktree_gets_the_context_without_a_warning(session: Session) -> None:
    """TD4: working in the item's worktree is right; the context says so by not warning."""
    worktree = session.root / ".phasegate/worktrees/rate-limit"
    with StubLLMServer(Script(default=Reply(text="noted"))) as stub:
        result = session.run(stub, "hello", cwd=worktree)
        (turn,) = stub.model_requests("anthropic")
    assert result.returncode == 0, result.stderr
    assert "- Next command: phasegate run rate-limit" in turn.text
    assert "WARNING: this session's directory" not in turn.text


def test_scripted_edit_of_the_state_file_is_denied_and_the_file_is_unchanged(
    session: Session,
) -> None:
    """Seed 000 risks: hooks back up the workflow; the guard's reason is the tool result."""
    state = session.root / "docs/features/rate-limit/.meta.json"
    before = state.read_bytes()
    edit = Reply.tool(
        "Edit", file_path=str(state), old_string='"status": "active"', new_string='"status": "x"'
    )
    script = Script(
        anthropic=[
            Rule(edit, Match(tool="Edit", tool_result=False)),
            Rule(Reply(text="I will run phasegate instead."), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        result = session.run(stub, "mark the item completed")
        turns = stub.model_requests("anthropic")
    output: dict[str, Any] = json.loads(result.stdout)
    assert state.read_bytes() == before
    assert [d["tool_name"] for d in output["permission_denials"]] == ["Edit"]
    assert len(turns) == 2 and turns[1].tool_result
    assert "is the .meta.json of work item 'rate-limit'" in turns[1].last
    assert "`phasegate run rate-limit` to advance it" in turns[1].last


def test_status_slash_command_puts_the_cli_output_in_the_prompt(session: Session) -> None:
    """Principle 1, enforce in code: /phasegate-status runs the CLI; the model summarises."""
    with StubLLMServer(Script(default=Reply(text="summary"))) as stub:
        result = session.run(stub, "/phasegate-status rate-limit")
        (turn,) = stub.model_requests("anthropic")
    assert result.returncode == 0, result.stderr
    assert "Output of `phasegate status rate-limit`:" in turn.prompt
    assert "rate-limit (feature, mode standard, active)" in turn.prompt
    assert "Phase: specify; next: design" in turn.prompt
