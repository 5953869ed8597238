"""The provider key reaches Codex, never the commands it runs nor its ``CODEX_HOME``.

Codex needs ``OPENAI_API_KEY`` to talk to its provider; a command the model
runs (``env``) must not see it, nor another secret-named variable Codex is
given (``CODEX_*``), and Codex's shell snapshot (the shell's whole environment
written to ``CODEX_HOME/shell_snapshots``) must not put them on disk. A secret
the user lists in ``pass_env`` is for the commands, and reaches them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_helpers import STUB_KEY, codex_settings, make_request

from phasegate.agents.base import Access
from phasegate.agents.codex import CodexBackend
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall

pytestmark = pytest.mark.cli_e2e

#: A secret-named variable Codex is handed as one of its own (the ``CODEX_`` prefix).
CODEX_SECRET = "codex-secret-value-5555555555"
#: A secret the user passes to the agent on purpose (pass_env), by a secret's name.
TOKEN = "deploy-token-value-9876543210"
SHOW = "env; cat $CODEX_HOME/shell_snapshots/* 2>/dev/null; echo listed"


def _files_holding(folder: Path, secret: str) -> list[str]:
    needle = secret.encode()
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.parametrize("access", [Access.READ_ONLY, Access.WRITE])
def test_commands_and_codex_home_never_hold_the_keys(
    codex_bin: Path, home: Path, work: Path, access: Access, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", TOKEN)
    monkeypatch.setenv("CODEX_EXTRA_SECRET", CODEX_SECRET)
    script = Script(
        openai=[
            Rule(
                Reply(tool_calls=(ToolCall("exec_command", {"cmd": SHOW}),)),
                Match(tool_result=False),
            ),
            Rule(Reply(text="done"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        settings = codex_settings(stub, home, pass_env=["DEPLOY_TOKEN"])
        result = CodexBackend(settings).run(make_request(work, "Look.", access=access))
        turns = stub.model_requests("openai")
    assert result.ok, result.error
    shown = turns[-1].last
    assert "listed" in shown and "PATH=" in shown  # the command ran and printed its env
    assert STUB_KEY not in shown and "OPENAI_API_KEY" not in shown
    assert CODEX_SECRET not in shown and "CODEX_EXTRA_SECRET" not in shown
    assert f"DEPLOY_TOKEN={TOKEN}" in shown  # pass_env: the user's choice
    # Codex authenticated with the key all the same (it reached the stub).
    assert turns[0].header("authorization") is not None
    codex_home = Path(settings["config_dir"])
    assert any(codex_home.rglob("*"))  # Codex wrote there
    assert _files_holding(codex_home, STUB_KEY) == []
    assert _files_holding(codex_home, CODEX_SECRET) == []
