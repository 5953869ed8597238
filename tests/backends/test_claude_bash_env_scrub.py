"""Claude Code's Bash commands do not see the provider key phasegate hands Claude Code.

Claude Code removes it from its commands' environment in its sandbox
(``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1``), which on Linux needs ``bwrap`` and
``socat``; without them a call offered Bash fails before it starts, naming both.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from backend_helpers import STUB_KEY, claude_settings, init_git_repo, make_request
from test_confinement import ROUTES, SHELL_ROUTES, Layout, _absolute, _call_then_done
from test_confinement import layout as layout  # the fixture
from test_doctor_and_init import phasegate, write_config

from phasegate.agents.base import Access
from phasegate.agents.claude import ClaudeBackend
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer, ToolCall

pytestmark = pytest.mark.cli_e2e

BASH_ENV = {"tools": ["Read", "Write", "Edit", "Bash"], "allowed_tools": ["Bash(env:*)"]}
SANDBOX = ("bwrap", "socat")
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox needs bwrap and socat on Linux only"
)


def _writer_running_env(
    home: Path, work: Path, scrub: str | None = None, **settings: object
) -> tuple[bool, str | None, list[LoggedRequest]]:
    """A writer that writes ``a.txt``, then runs ``env > env.txt``, then stops."""

    def model(request: LoggedRequest) -> Reply:
        if not request.tool_result:
            return Reply.tool("Write", file_path=str(work / "a.txt"), content="A\n")
        if "env.txt" not in request.last and "File created" in request.last:
            return Reply.tool("Bash", command="env > env.txt")
        return Reply(text="done")

    with StubLLMServer(Script(anthropic=[model])) as stub:
        config = {**claude_settings(stub, home), **BASH_ENV, **settings}
        if scrub is not None:
            config["env"] = {**config["env"], "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB": scrub}
        result = ClaudeBackend(config).run(make_request(work, "Show env.", access=Access.WRITE))
        turns = stub.model_requests("anthropic")
    return result.ok, result.error, turns


@linux_only
def test_env_in_a_bash_command_shows_no_provider_key(
    claude_bin: Path, home: Path, work: Path
) -> None:
    """Bash offered: ``env`` in a command shows PATH but not ``ANTHROPIC_API_KEY``, and the
    writer still writes inside the tree, by its Write tool and by a redirection."""
    if any(shutil.which(name) is None for name in SANDBOX):
        pytest.skip("bwrap or socat is not installed (make sandbox)")
    ok, error, _ = _writer_running_env(home, work)
    assert ok, error
    assert (work / "a.txt").read_text() == "A\n"
    seen = (work / "env.txt").read_text()
    assert "PATH=" in seen
    assert STUB_KEY not in seen and "ANTHROPIC_API_KEY" not in seen


def test_opting_out_lets_commands_see_the_key(claude_bin: Path, home: Path, work: Path) -> None:
    """``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: '0'`` in ``env``: the documented opt-out."""
    ok, error, _ = _writer_running_env(home, work, scrub="0")
    assert ok, error
    assert STUB_KEY in (work / "env.txt").read_text()


@linux_only
def test_without_the_sandbox_a_call_offered_bash_fails_naming_it(
    claude_bin: Path, home: Path, work: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No bwrap nor socat on PATH: the call fails before Claude Code starts, one line
    naming both and the opt-out; a writer without Bash still runs."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    ok, error, turns = _writer_running_env(home, work)
    assert not ok and not turns
    assert error is not None and "\n" not in error
    assert "bwrap and socat are not installed" in error
    assert "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: '0'" in error
    assert not (work / "a.txt").exists()
    ok, error, _ = _writer_running_env(home, work, tools=["Read", "Write"], allowed_tools=[])
    assert ok, error
    assert (work / "a.txt").exists()


@linux_only
def test_doctor_says_bash_needs_the_sandbox(claude_bin: Path, home: Path, tmp_path: Path) -> None:
    """doctor: claude with Bash in its tools is not usable without bwrap and socat (exit 6)."""
    root = init_git_repo(tmp_path / "repo")
    bin_dir = tmp_path / "only-git"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    settings = {"binary": str(claude_bin), "config_dir": str(home / "claude-config"), **BASH_ENV}
    write_config(
        root, {"roles": {"default": {"backend": "claude"}}, "backends": {"claude": settings}}
    )
    result = phasegate(root, "doctor", PATH=str(bin_dir), ANTHROPIC_API_KEY=STUB_KEY)
    assert result.returncode == 6, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("claude "))
    assert "not usable" in line and "bwrap and socat are not installed" in line


def _sandboxed() -> None:
    if not sys.platform.startswith("linux") or any(shutil.which(n) is None for n in SANDBOX):
        pytest.skip("the sandbox (bwrap and socat, on Linux) is not installed (make sandbox)")


@pytest.mark.parametrize("route", ROUTES)
def test_a_writer_offered_bash_still_cannot_write_outside_the_tree(
    claude_bin: Path, home: Path, layout: Layout, route: str
) -> None:
    """Bash offered, so Claude Code runs in its default mode with edits pre-approved inside
    the tree only: Write to an absolute path, a ``..`` path or through a symlink is denied."""
    _sandboxed()
    call = ToolCall("Write", {"file_path": _absolute(layout, route), "content": "x"})
    with StubLLMServer(_call_then_done("anthropic", call)) as stub:
        backend = ClaudeBackend({**claude_settings(stub, home), **BASH_ENV})
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
    assert result.ok, result.error
    assert layout.escaped() == []
    assert "permission denied for: Write" in result.stderr


@pytest.mark.parametrize("route", SHELL_ROUTES)
def test_a_bash_redirection_cannot_write_outside_the_tree(
    claude_bin: Path, home: Path, layout: Layout, route: str
) -> None:
    """``env > OUTSIDE`` with ``Bash(env:*)`` allowed: denied, no file."""
    _sandboxed()
    call = ToolCall("Bash", {"command": f"env > {layout.target(route)}"})
    with StubLLMServer(_call_then_done("anthropic", call)) as stub:
        backend = ClaudeBackend({**claude_settings(stub, home), **BASH_ENV})
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
    assert result.ok, result.error
    assert layout.escaped() == []


def test_a_writer_offered_bash_still_writes_in_its_extra_folder(
    claude_bin: Path, home: Path, layout: Layout
) -> None:
    """The work item's folder outside the tree (``extra_dirs``) stays writable."""
    _sandboxed()
    target = layout.outside / "notes.md"
    call = ToolCall("Write", {"file_path": str(target), "content": "x"})
    with StubLLMServer(_call_then_done("anthropic", call)) as stub:
        backend = ClaudeBackend({**claude_settings(stub, home), **BASH_ENV})
        request = make_request(
            layout.tree, "Write.", access=Access.WRITE, extra_dirs=(layout.outside,)
        )
        result = backend.run(request)
    assert result.ok, result.error
    assert target.read_text() == "x"
