"""How a failing agent CLI is reported: the cause it gave, in words a user can act on.

A Codex that cannot reach its endpoint is stopped soon and its connection error named;
a CLI killed by a signal says which; a version probe that printed something else shows
it; Gemini's credential advice names the settings file that counts; a Claude permission
denial names the tool and its path.
"""

from __future__ import annotations

import socket
import stat
import time
from pathlib import Path

import pytest
from backend_helpers import claude_settings, codex_settings, help_listing, make_request

from phasegate.agents.base import Access
from phasegate.agents.claude import ClaudeBackend
from phasegate.agents.codex import CodexBackend
from phasegate.agents.gemini import GeminiBackend
from phasegate.errors import BackendUnavailable
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _script_cli(directory: Path, body: str, version: str = "2.1.330 (Claude Code)") -> Path:
    """A stand-in claude answering --version and --help like the real one, then ``body``."""
    directory.mkdir(parents=True, exist_ok=True)
    help_file = directory / "help.txt"
    help_file.write_text(help_listing(ClaudeBackend), encoding="utf-8")
    path = directory / "claude"
    path.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --version) echo "{version}"; exit 0;; '
        f'--help) cat "{help_file}"; exit 0;; esac\n'
        "cat > /dev/null\n" + body + "\n",
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.cli_e2e
def test_codex_that_cannot_connect_is_stopped_soon_naming_the_error(
    codex_bin: Path, home: Path, work: Path
) -> None:
    with StubLLMServer(Script()) as stub:
        settings = codex_settings(stub, home)
    settings["base_url"] = f"http://127.0.0.1:{_closed_port()}/v1"
    backend = CodexBackend(settings)
    started = time.monotonic()
    result = backend.run(make_request(work, "Say hello.", timeout=120))
    took = time.monotonic() - started
    assert not result.ok
    assert result.error is not None
    assert "Connection failed" in result.error, result.error
    assert "cannot connect to" in result.error and settings["base_url"] in result.error
    assert "timeout" not in result.error
    assert took < 60, f"took {took:.0f}s"


def test_a_cli_killed_by_a_signal_says_so_and_shows_its_stderr(tmp_path: Path, work: Path) -> None:
    binary = _script_cli(tmp_path / "bin", 'echo "partial" >&2; kill -SEGV $$')
    result = ClaudeBackend({"binary": str(binary)}).run(make_request(work))
    assert result.error is not None
    assert "claude was killed by signal SIGSEGV" in result.error, result.error
    assert "stderr: partial" in result.error
    assert "status -11" not in result.error


def test_a_cli_exiting_with_a_status_shows_its_stderr_as_stderr(tmp_path: Path, work: Path) -> None:
    binary = _script_cli(tmp_path / "bin", 'echo "bad flag" >&2; exit 3')
    result = ClaudeBackend({"binary": str(binary)}).run(make_request(work))
    assert result.error is not None
    assert "claude exited with status 3" in result.error, result.error
    assert result.error.endswith("stderr: bad flag")


def test_a_version_probe_printing_no_version_shows_what_it_printed(tmp_path: Path) -> None:
    binary = _script_cli(tmp_path / "bin", "exit 0", version="garbage-version")
    with pytest.raises(BackendUnavailable) as caught:
        ClaudeBackend({"binary": str(binary)})
    assert "printed 'garbage-version', which is not a version" in str(caught.value)


def test_a_long_version_probe_output_is_cut(tmp_path: Path) -> None:
    binary = _script_cli(tmp_path / "bin", "exit 0", version="x" * 500)
    with pytest.raises(BackendUnavailable) as caught:
        ClaudeBackend({"binary": str(binary)})
    message = str(caught.value)
    assert "which is not a version" in message
    assert "x" * 77 + "..." in message and "x" * 100 not in message


@pytest.mark.cli_e2e
def test_gemini_credential_advice_names_the_settings_file_of_its_config_dir(
    gemini_bin: Path, home: Path, tmp_path: Path
) -> None:
    config_dir = tmp_path / "gemini-home"
    backend = GeminiBackend(
        {
            "binary": str(gemini_bin),
            "config_dir": str(config_dir),
            "base_url": "http://127.0.0.1:9",
            "env": {"HOME": str(home)},
        }
    )
    found = backend.availability()
    assert not found.usable
    assert str(config_dir / ".gemini" / "settings.json") in found.detail, found.detail
    assert "~/.gemini" not in found.detail


@pytest.mark.cli_e2e
def test_a_permission_denial_names_the_tool_and_its_path(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    work, outside = tmp_path / "tree", tmp_path / "outside.txt"
    work.mkdir()
    script = Script(
        anthropic=[
            Rule(Reply.tool("Write", file_path=str(outside), content="x"), Match(tool="Write")),
            Rule(Reply(text="done"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(work, "Write.", access=Access.WRITE))
    assert not outside.exists()
    assert f"[phasegate] permission denied for: Write {outside}" in result.stderr
