"""Gemini's shell commands do not see the provider key phasegate hands Gemini CLI.

Offered ``run_shell_command`` (or Gemini's own set, which has it), a call's
settings turn on Gemini's redaction of secret-looking variables; names in
``pass_env`` still reach the commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend_helpers import STUB_KEY, gemini_settings, make_request

from phasegate.agents.base import Access
from phasegate.agents.gemini import GeminiBackend
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall

pytestmark = pytest.mark.cli_e2e


def _env_seen(
    home: Path,
    work: Path,
    monkeypatch: pytest.MonkeyPatch,
    redaction: dict[str, object] | None = None,
    **settings: object,
) -> tuple[str, tuple[str, ...]]:
    """What ``env`` printed in a writer's shell command, and the tools offered."""
    monkeypatch.setenv("NPM_TOKEN", "npm-token-for-the-tests-0123")
    monkeypatch.setenv("BUILD_MODE", "release")
    call = ToolCall("run_shell_command", {"command": "env"})
    script = Script(
        gemini=[
            Rule(Reply(tool_calls=(call,)), Match(tool_result=False)),
            Rule(Reply(text="done"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = GeminiBackend(gemini_settings(stub, home, **settings))
        if redaction is not None:  # the user's own Gemini settings say so
            settings_file = home / "gemini-home" / ".gemini" / "settings.json"
            written = json.loads(settings_file.read_text())
            written["security"]["environmentVariableRedaction"] = redaction
            settings_file.write_text(json.dumps(written))
        result = backend.run(make_request(work, "Show env.", access=Access.WRITE))
        turns = stub.model_requests("gemini")
    assert result.ok, result.error
    return turns[-1].last, turns[0].tools


def test_env_in_a_shell_command_shows_no_provider_key(
    gemini_bin: Path, home: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tools: [read_file, run_shell_command(env)]``: ``env`` runs and shows PATH, not
    ``GEMINI_API_KEY``; of ``pass_env``, ``BUILD_MODE`` is kept, but Gemini hides a name
    that looks secret (``NPM_TOKEN``) whatever it is told."""
    tools = ["read_file", "run_shell_command(env)"]
    seen, offered = _env_seen(
        home, work, monkeypatch, tools=tools, pass_env=["NPM_TOKEN", "BUILD_MODE"]
    )
    assert "run_shell_command" in offered
    assert "PATH=" in seen
    assert STUB_KEY not in seen and "GEMINI_API_KEY" not in seen
    assert "BUILD_MODE=release" in seen
    assert "npm-token-for-the-tests-0123" not in seen


def test_geminis_own_tool_set_hides_the_key_too(
    gemini_bin: Path, home: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tools: [default]`` offers the shell as well: the key stays hidden there too."""
    seen, _ = _env_seen(home, work, monkeypatch, tools=["default"], bypass_permissions=True)
    assert STUB_KEY not in seen


def test_the_users_explicit_opt_out_is_kept(
    gemini_bin: Path, home: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``security.environmentVariableRedaction.enabled: false`` in the user's Gemini
    settings: commands see the key, as the user chose."""
    tools = ["read_file", "run_shell_command(env)"]
    seen, _ = _env_seen(home, work, monkeypatch, {"enabled": False}, tools=tools)
    assert STUB_KEY in seen
