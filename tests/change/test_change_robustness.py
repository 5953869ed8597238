"""Seed 002 scenario "Orchestration Robustness": a BrokenPipe while talking to an agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from change_helpers import ChangeAgents, changes
from ruamel.yaml import YAML

from phasegate.agents.base import AgentRequest, AgentResult, Backend
from phasegate.errors import AgentError, ExitCode


class PipedAgent(Backend):
    """A third-party style backend that pipes each prompt into an agent process's stdin.

    For its first ``breaks`` calls the process exits before reading, so writing
    the prompt raises a real BrokenPipeError out of ``run``; afterwards the
    process reads the prompt and the scripted agents do the work.
    """

    name = "piped"

    def __init__(self, agents: ChangeAgents, breaks: int) -> None:
        super().__init__()
        self.agents = agents.backend()
        self.breaks = breaks
        self.calls = 0

    def run(self, request: AgentRequest) -> AgentResult:
        self.calls += 1
        code = "pass" if self.calls <= self.breaks else "import sys; sys.stdin.read()"
        proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
        )
        assert proc.stdin is not None
        if self.calls <= self.breaks:
            proc.wait()  # gone before the prompt is written
        try:
            proc.stdin.write(request.prompt_text().encode())
            proc.stdin.close()
        finally:
            proc.wait()
        return self.agents.run(request)


def events(repo: Path, name: str) -> list[dict[str, object]]:
    lines = (repo / "changes/add-oauth/.journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def test_a_broken_pipe_to_an_agent_is_retried(repo: Path) -> None:
    """Robustness: the failed attempt is recorded and retried; the plan goes on."""
    agent = PipedAgent(ChangeAgents(repo), breaks=1)
    outcome = changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": agent})
    assert outcome.action == "challenged"
    (failed,) = events(repo, "agent.failed")
    assert "lost the connection to the agent (BrokenPipeError" in str(failed["error"])
    assert failed["role"] == "proposal-author" and failed["tries"] == 1


def test_a_broken_pipe_that_persists_is_a_clear_agent_error(repo: Path) -> None:
    """Robustness: when retries run out, one clear line and exit code 6, state intact."""
    agent = PipedAgent(ChangeAgents(repo), breaks=99)
    with pytest.raises(AgentError) as caught:
        changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": agent})
    message = str(caught.value)
    assert caught.value.exit_code is ExitCode.AGENT
    assert message.startswith("proposal-author (piped) failed in phase proposal after 2 attempts")
    assert "BrokenPipeError" in message
    assert changes(repo).state("add-oauth").phase.value == "proposed"
    retried = PipedAgent(ChangeAgents(repo), breaks=0)
    again = changes(repo).plan("add-oauth", backends={"default": retried})
    assert again.action == "challenged"


DYING_CLAUDE = """\
#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi
exec 0<&-
echo "agent crashed while reading its prompt" >&2
exit 3
"""


def test_cli_reports_a_cli_agent_that_breaks_the_pipe_with_exit_code_6(repo: Path) -> None:
    """Robustness through the real claude backend and CLI: never a generic crash (exit 1)."""
    binary = repo.parent / "claude"
    binary.write_text(DYING_CLAUDE)
    binary.chmod(0o755)
    config = {"roles": {"default": {"backend": "claude", "binary": str(binary)}}}
    (repo / ".phasegate").mkdir()
    with open(repo / ".phasegate/config.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(config, handle)
    # A prompt far larger than a pipe buffer, so the agent's exit breaks the write.
    description = "Add OAuth login. " + "Details. " * 10_000
    result = subprocess.run(
        [sys.executable, "-m", "phasegate", "plan", "add-oauth", description],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "ANTHROPIC_API_KEY": "sk-stub-not-a-real-key"},
    )
    assert result.returncode == ExitCode.AGENT, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("phasegate: error: proposal-author (claude) failed in phase proposal")
    assert "broken pipe" in last and "internal error" not in result.stderr
