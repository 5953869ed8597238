"""No backend lets a writer create a file outside its work tree, by default.

Each backend's writer is scripted (through the stub server) to write outside
the tree by every route its tools offer: an absolute path, a ``../`` path, a
symlink inside the tree that points out of it, and, where the backend has a
shell, a shell command writing to ``/tmp``, ``$TMPDIR``, ``../`` and through
the symlink. The test's folders live under ``/tmp`` (pytest's), which is where
Codex's ``workspace-write`` sandbox used to let writes through.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from backend_helpers import (
    claude_settings,
    codex_settings,
    gemini_settings,
    make_request,
    openai_settings,
)

from phasegate.agents.base import Access, AgentResult, McpServer
from phasegate.agents.claude import ClaudeBackend
from phasegate.agents.codex import CodexBackend
from phasegate.agents.gemini import GeminiBackend
from phasegate.agents.openai_chat import OpenAIChatBackend
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall

ROUTES = ("absolute", "dotdot", "symlink")
SHELL_ROUTES = ("slash-tmp", "tmpdir", "dotdot", "symlink")


@dataclass(frozen=True)
class Layout:
    """A work tree, a folder outside it (reached by ``tree/link``) and the temp folders."""

    tree: Path
    outside: Path
    tmpdir: Path
    slash_tmp: Path

    def target(self, route: str) -> str:
        """Where ``route`` writes, as the agent would spell it."""
        name = f"escape-{route}.txt"
        return {
            "absolute": str(self.outside / name),
            "dotdot": f"../{name}",
            "symlink": f"link/{name}",
            "slash-tmp": str(self.slash_tmp),
            "tmpdir": f"$TMPDIR/{name}",
        }[route]

    def escaped(self) -> list[str]:
        """Every file created outside the tree (empty when confinement held)."""
        found = [p for p in self.tree.parent.rglob("escape-*") if self.tree not in p.parents]
        if self.slash_tmp.exists():
            found.append(self.slash_tmp)
        return sorted(str(p) for p in found)


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Layout]:
    tree, outside, tmpdir = tmp_path / "tree", tmp_path / "outside", tmp_path / "envtmp"
    for folder in (tree, outside, tmpdir):
        folder.mkdir()
    (tree / "link").symlink_to(outside)
    # phasegate's own TMPDIR, which the CLIs inherit.
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    slash_tmp = Path("/tmp") / f"phasegate-escape-{uuid.uuid4().hex}"
    yield Layout(tree, outside, tmpdir, slash_tmp)
    if slash_tmp.exists():
        slash_tmp.unlink()


def _call_then_done(provider: str, call: ToolCall) -> Script:
    rules = [
        Rule(Reply(tool_calls=(call,)), Match(tool_result=False)),
        Rule(Reply(text="done"), Match(tool_result=True)),
    ]
    return Script(**{provider: rules})  # type: ignore[arg-type]


def _absolute(layout: Layout, route: str) -> str:
    target = layout.target(route)
    return target if target.startswith("/") else str(layout.tree / target)


# -- claude -----------------------------------------------------------------------------


@pytest.mark.cli_e2e
@pytest.mark.parametrize("route", ROUTES)
def test_claude_writer_cannot_write_outside_the_tree(
    claude_bin: Path, home: Path, layout: Layout, route: str
) -> None:
    """Write with an absolute path, a ``..`` path, or through a symlink: denied, no file."""
    call = ToolCall("Write", {"file_path": _absolute(layout, route), "content": "x"})
    with StubLLMServer(_call_then_done("anthropic", call)) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
    assert result.ok, result.error
    assert layout.escaped() == []
    assert "permission denied for: Write" in result.stderr


SECRET = "TOP-SECRET-OUTSIDE-THE-TREE"
READS = {
    "read": lambda layout: ToolCall("Read", {"file_path": str(layout.outside / "secret.txt")}),
    "grep": lambda layout: ToolCall(
        "Grep", {"pattern": "TOP-SECRET", "path": str(layout.outside), "output_mode": "content"}
    ),
    "read-inside": lambda layout: ToolCall("Read", {"file_path": str(layout.tree / "notes.md")}),
}


def _claude_reader(
    claude_bin: Path, home: Path, layout: Layout, how: str, access: Access
) -> tuple[AgentResult, str]:
    """One call scripted to read ``how``; its result and what the tool gave the model."""
    (layout.outside / "secret.txt").write_text(SECRET + "\n")
    (layout.tree / "notes.md").write_text("inside the tree\n")
    server = McpServer(
        name="demo",
        command=sys.executable,
        args=(str(Path(__file__).with_name("demo_mcp_server.py")),),
        tools=("read_state",),
    )
    servers = (server,) if access is Access.READ_ONLY else ()
    with StubLLMServer(_call_then_done("anthropic", READS[how](layout))) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        request = make_request(layout.tree, "Read.", access=access, mcp_servers=servers)
        result = backend.run(request)
        turns = stub.model_requests("anthropic")
    return result, turns[-1].last


@pytest.mark.cli_e2e
@pytest.mark.parametrize("access", [Access.WRITE, Access.READ_ONLY])
@pytest.mark.parametrize("how", ["read", "grep"])
def test_claude_cannot_read_outside_the_tree(
    claude_bin: Path, home: Path, layout: Layout, how: str, access: Access
) -> None:
    """A writer (acceptEdits) and a reviewer with MCP tools (dontAsk) pre-approve reading
    inside the work tree only: a bare ``Read`` rule let them read any file on the machine."""
    result, shown = _claude_reader(claude_bin, home, layout, how, access)
    assert result.ok, result.error
    assert SECRET not in shown
    assert "denied" in shown or "permission" in shown


@pytest.mark.cli_e2e
@pytest.mark.parametrize("access", [Access.WRITE, Access.READ_ONLY])
def test_claude_reads_inside_the_tree_unasked(
    claude_bin: Path, home: Path, layout: Layout, access: Access
) -> None:
    result, shown = _claude_reader(claude_bin, home, layout, "read-inside", access)
    assert result.ok, result.error
    assert "inside the tree" in shown


@pytest.mark.cli_e2e
@pytest.mark.parametrize("route", SHELL_ROUTES)
def test_claude_writer_shell_cannot_write_outside_the_tree(
    claude_bin: Path, home: Path, layout: Layout, route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even with a shell command pre-approved (``Bash(echo:*)``), a redirect out of the
    tree is denied (in acceptEdits, the key left visible: test_claude_bash_env_scrub.py
    checks the same with Claude Code's sandbox)."""
    monkeypatch.setenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "0")
    call = ToolCall("Bash", {"command": f"echo x > {layout.target(route)}"})
    allowed = ["Read", "Glob", "Grep", "Bash(echo:*)"]
    with StubLLMServer(_call_then_done("anthropic", call)) as stub:
        backend = ClaudeBackend(claude_settings(stub, home, allowed_tools=allowed))
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
        first = stub.model_requests("anthropic")[0]
    assert result.ok, result.error
    assert "Bash" in first.tools
    assert layout.escaped() == []


# -- codex ------------------------------------------------------------------------------


def _patch(path: str) -> ToolCall:
    return ToolCall(
        "apply_patch", input=f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n"
    )


def _codex_write(home: Path, layout: Layout, call: ToolCall) -> tuple[AgentResult, str]:
    with StubLLMServer(_call_then_done("openai", call)) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
        turns = stub.model_requests("openai")
    return result, turns[-1].last


@pytest.mark.cli_e2e
@pytest.mark.parametrize("route", ROUTES)
def test_codex_writer_cannot_patch_outside_the_tree(
    codex_bin: Path, home: Path, layout: Layout, route: str
) -> None:
    """apply_patch with an absolute path, a ``..`` path, or through a symlink: refused."""
    result, _ = _codex_write(home, layout, _patch(layout.target(route)))
    assert result.ok, result.error
    assert layout.escaped() == []


@pytest.mark.cli_e2e
@pytest.mark.parametrize("route", SHELL_ROUTES)
def test_codex_writer_shell_cannot_write_outside_the_tree(
    codex_bin: Path, home: Path, layout: Layout, route: str
) -> None:
    """A shell command writing to /tmp, $TMPDIR, ``..`` or through a symlink: refused by
    the sandbox (``workspace-write`` alone allows /tmp and $TMPDIR)."""
    call = ToolCall("exec_command", {"cmd": f"echo x > {layout.target(route)}"})
    result, _ = _codex_write(home, layout, call)
    assert result.ok, result.error
    assert layout.escaped() == []


@pytest.mark.cli_e2e
def test_codex_writer_keeps_a_private_temporary_folder(
    codex_bin: Path, home: Path, layout: Layout
) -> None:
    """Tools that need a temp folder still work: $TMPDIR is writable, private to the call."""
    call = ToolCall("exec_command", {"cmd": "echo scratch > $TMPDIR/t.txt && cat $TMPDIR/t.txt"})
    result, tool_output = _codex_write(home, layout, call)
    assert result.ok, result.error
    assert "exited with code 0" in tool_output and "scratch" in tool_output
    assert layout.escaped() == [] and not list(layout.tmpdir.iterdir())


# -- gemini -----------------------------------------------------------------------------


@pytest.mark.cli_e2e
@pytest.mark.parametrize("route", ROUTES)
def test_gemini_writer_cannot_write_outside_the_tree(
    gemini_bin: Path, home: Path, layout: Layout, route: str
) -> None:
    """write_file with an absolute path, a ``..`` path, or through a symlink: refused."""
    call = ToolCall("write_file", {"file_path": layout.target(route), "content": "x"})
    with StubLLMServer(_call_then_done("gemini", call)) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
        answer = stub.model_requests("gemini")[-1].last
    assert result.ok, result.error
    assert layout.escaped() == []
    assert "Path not in workspace" in answer


@pytest.mark.cli_e2e
def test_gemini_writer_has_no_shell(gemini_bin: Path, home: Path, layout: Layout) -> None:
    """Headless ``auto_edit`` offers no shell tool: a scripted shell call is not found."""
    call = ToolCall("run_shell_command", {"command": f"echo x > {layout.target('slash-tmp')}"})
    with StubLLMServer(_call_then_done("gemini", call)) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
        turns = stub.model_requests("gemini")
    assert result.ok, result.error
    assert "run_shell_command" not in turns[0].tools
    assert json.loads(turns[-1].last)["error"].startswith('Tool "run_shell_command" not found')
    assert layout.escaped() == []


# -- openai (files-in-JSON) -------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_openai_writer_cannot_write_outside_the_tree(layout: Layout, route: str) -> None:
    """A files-in-JSON reply naming a path out of the tree is refused whole: nothing written."""
    answer = {
        "summary": "escape",
        "files": [
            {"path": "inside.txt", "content": "x"},
            {"path": layout.target(route), "content": "x"},
        ],
        "delete": [],
    }
    with StubLLMServer(Script(openai=[Rule(Reply(text=json.dumps(answer)))])) as stub:
        backend = OpenAIChatBackend(openai_settings(stub))
        result = backend.run(make_request(layout.tree, "Write.", access=Access.WRITE))
    assert not result.ok
    assert result.error is not None and "nothing was written" in result.error
    assert layout.escaped() == [] and not (layout.tree / "inside.txt").exists()
    assert os.listdir(layout.outside) == []


GEMINI_READS = {
    "read-absolute": lambda layout: ToolCall(
        "read_file", {"file_path": str(layout.outside / "secret.txt")}
    ),
    "read-dotdot": lambda layout: ToolCall("read_file", {"file_path": "../outside/secret.txt"}),
    "read-symlink": lambda layout: ToolCall("read_file", {"file_path": "link/secret.txt"}),
    "grep": lambda layout: ToolCall(
        "grep_search", {"pattern": "TOP-SECRET", "dir_path": str(layout.outside)}
    ),
    "glob": lambda layout: ToolCall("glob", {"pattern": "*", "dir_path": str(layout.outside)}),
    "list": lambda layout: ToolCall("list_directory", {"dir_path": str(layout.outside)}),
    "read-inside": lambda layout: ToolCall("read_file", {"file_path": "notes.md"}),
}


def _gemini_reader(home: Path, layout: Layout, how: str, access: Access) -> tuple[AgentResult, str]:
    """One Gemini call scripted to read ``how``; its result and what the tool gave the model."""
    (layout.outside / "secret.txt").write_text(SECRET + "\n")
    (layout.tree / "notes.md").write_text("inside the tree\n")
    with StubLLMServer(_call_then_done("gemini", GEMINI_READS[how](layout))) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        result = backend.run(make_request(layout.tree, "Read.", access=access))
        turns = stub.model_requests("gemini")
    return result, turns[-1].last


@pytest.mark.cli_e2e
@pytest.mark.parametrize("access", [Access.WRITE, Access.READ_ONLY])
@pytest.mark.parametrize(
    "how", ["read-absolute", "read-dotdot", "read-symlink", "grep", "glob", "list"]
)
def test_gemini_cannot_read_outside_the_tree(
    gemini_bin: Path, home: Path, layout: Layout, how: str, access: Access
) -> None:
    """Gemini CLI's file tools refuse paths outside its workspace (the work tree and the
    folders granted to the call): neither a file's text nor a listing of it gets out."""
    result, shown = _gemini_reader(home, layout, how, access)
    assert result.ok, result.error
    assert SECRET not in shown
    if not how.startswith("read"):  # a listing names no file outside either
        assert "secret.txt" not in shown
    assert "workspace" in shown.lower()


@pytest.mark.cli_e2e
@pytest.mark.parametrize("access", [Access.WRITE, Access.READ_ONLY])
def test_gemini_reads_inside_the_tree(
    gemini_bin: Path, home: Path, layout: Layout, access: Access
) -> None:
    result, shown = _gemini_reader(home, layout, "read-inside", access)
    assert result.ok, result.error
    assert "inside the tree" in shown
