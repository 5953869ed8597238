"""The real Claude Code CLI (``claude -p``) runs headless against the stub server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer
from phasegate.testing.clis import claude_env

pytestmark = pytest.mark.cli_e2e


def _claude(claude_bin: Path, prompt: str, *flags: str) -> list[str]:
    return [str(claude_bin), "-p", prompt, "--output-format", "json", *flags]


def _env(cli_run: Any, stub: StubLLMServer) -> dict[str, str]:
    return cli_run.env(**claude_env(stub.url, cli_run.home / "claude-config"))


def test_claude_writes_a_file_with_its_write_tool(claude_bin: Path, cli_run: Any) -> None:
    """A scripted Write call makes claude create the file, then it reports the final text."""
    target = cli_run.work / "hello.txt"
    script = Script(
        anthropic=[
            Rule(
                Reply.tool("Write", file_path=str(target), content="hello\n"), Match(tool="Write")
            ),
            Rule(Reply(text="Wrote hello.txt"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        argv = _claude(claude_bin, "create hello.txt", "--permission-mode", "acceptEdits")
        result = cli_run.run(argv, _env(cli_run, stub))
        turns = stub.model_requests("anthropic")
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert target.read_text() == "hello\n"
    assert (output["result"], output["is_error"], output["num_turns"]) == (
        "Wrote hello.txt",
        False,
        2,
    )
    assert "File created successfully" in turns[1].last


def test_claude_json_schema_returns_structured_output(claude_bin: Path, cli_run: Any) -> None:
    """--json-schema offers a StructuredOutput tool; its call lands in ``structured_output``."""
    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string"}},
        "required": ["verdict"],
    }
    script = Script(anthropic=[Rule(Reply.json({"verdict": "approve"}), Match(schema=True))])
    with StubLLMServer(script) as stub:
        argv = _claude(claude_bin, "review", "--json-schema", json.dumps(schema))
        result = cli_run.run(argv, _env(cli_run, stub))
        (turn,) = stub.model_requests("anthropic")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structured_output"] == {"verdict": "approve"}
    structured_tool = next(t for t in turn.body["tools"] if t["name"] == "StructuredOutput")
    assert structured_tool["input_schema"] == schema


def test_claude_system_prompt_reports_the_working_directory(claude_bin: Path, cli_run: Any) -> None:
    """The request shows the agent its cwd, so tests can check where it was started."""
    with StubLLMServer(Script(default=Reply(text="ok"))) as stub:
        result = cli_run.run(_claude(claude_bin, "where are you?"), _env(cli_run, stub))
        (turn,) = stub.model_requests("anthropic")
    assert result.returncode == 0, result.stderr
    assert f"Primary working directory: {cli_run.work}" in turn.system
    assert "where are you?" in turn.prompt


def test_claude_tools_flag_limits_the_offered_tools(claude_bin: Path, cli_run: Any) -> None:
    """``--tools Read`` leaves Write and Bash out of the tool list the model sees."""
    with StubLLMServer() as stub:
        result = cli_run.run(_claude(claude_bin, "look", "--tools", "Read"), _env(cli_run, stub))
        (turn,) = stub.model_requests("anthropic")
    assert result.returncode == 0, result.stderr
    assert "Read" in turn.tools
    assert "Write" not in turn.tools and "Bash" not in turn.tools


def test_claude_resume_continues_the_session(claude_bin: Path, cli_run: Any) -> None:
    """``--resume <session_id>`` sends the earlier turns along with the new prompt."""
    script = Script(
        anthropic=[
            Rule(Reply(text="first answer"), Match(last="first question")),
            Rule(Reply(text="second answer"), Match(last="second question")),
        ]
    )
    with StubLLMServer(script) as stub:
        env = _env(cli_run, stub)
        first = json.loads(cli_run.run(_claude(claude_bin, "first question"), env).stdout)
        argv = _claude(claude_bin, "second question", "--resume", first["session_id"])
        second = json.loads(cli_run.run(argv, env).stdout)
        turns = stub.model_requests("anthropic")
    assert (first["result"], second["result"]) == ("first answer", "second answer")
    assert second["session_id"] == first["session_id"]
    assert "first answer" in turns[1].text


def test_claude_api_error_is_reported_in_the_result(claude_bin: Path, cli_run: Any) -> None:
    """A provider error ends the run with exit 1, ``is_error`` and the HTTP status."""
    with StubLLMServer(Script(default=Reply.fail(500, "scripted outage"))) as stub:
        result = cli_run.run(_claude(claude_bin, "hi"), _env(cli_run, stub))
    output = json.loads(result.stdout)
    assert result.returncode == 1
    assert (output["is_error"], output["api_error_status"]) == (True, 500)
    assert "scripted outage" in output["result"]


def test_claude_hangs_while_the_model_stalls(claude_bin: Path, cli_run: Any) -> None:
    """A stalled stream keeps claude waiting (a caller's timeout must end it)."""
    with StubLLMServer(Script(anthropic=[Rule(Reply.stall("thinking..."))])) as stub:
        cli_run.assert_hangs(_claude(claude_bin, "hi"), _env(cli_run, stub), stub)
