"""The real Gemini CLI (``gemini -p``) runs headless against the stub server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer
from phasegate.testing.clis import gemini_env

pytestmark = pytest.mark.cli_e2e

MODEL = "gemini-2.5-flash"


def _gemini(gemini_bin: Path, prompt: str, *flags: str) -> list[str]:
    return [
        str(gemini_bin),
        "-p",
        prompt,
        "--output-format",
        "json",
        "--skip-trust",
        "-m",
        MODEL,
        *flags,
    ]


def _env(cli_run: Any, stub: StubLLMServer) -> dict[str, str]:
    return cli_run.env(**gemini_env(stub.url, cli_run.home))


def test_gemini_json_output_has_response_and_token_stats(gemini_bin: Path, cli_run: Any) -> None:
    """``--output-format json`` prints the answer in ``response`` and tokens per model."""
    with StubLLMServer(Script(gemini=[Rule(Reply(text="plain answer"))])) as stub:
        result = cli_run.run(_gemini(gemini_bin, "say something"), _env(cli_run, stub))
        (turn,) = stub.model_requests("gemini")
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["response"] == "plain answer"
    tokens = output["stats"]["models"][MODEL]["tokens"]
    assert (tokens["prompt"], tokens["candidates"]) == (100, 20)
    assert turn.api == "stream_generate" and "say something" in turn.prompt


def test_gemini_writes_a_file_with_write_file(gemini_bin: Path, cli_run: Any) -> None:
    """In auto_edit mode a scripted write_file call creates the file before the answer."""
    target = cli_run.work / "hello.txt"
    script = Script(
        gemini=[
            Rule(
                Reply.tool("write_file", file_path=str(target), content="hello from gemini\n"),
                Match(tool="write_file"),
            ),
            Rule(Reply(text="Created hello.txt"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        argv = _gemini(gemini_bin, "create hello.txt", "--approval-mode", "auto_edit")
        result = cli_run.run(argv, _env(cli_run, stub))
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "hello from gemini\n"
    output = json.loads(result.stdout)
    assert output["response"] == "Created hello.txt"
    assert output["stats"]["tools"]["byName"]["write_file"]["success"] == 1


def test_gemini_default_mode_offers_no_write_tool(gemini_bin: Path, cli_run: Any) -> None:
    """Headless in the default approval mode, gemini does not offer write_file at all."""
    with StubLLMServer() as stub:
        result = cli_run.run(_gemini(gemini_bin, "look around"), _env(cli_run, stub))
        (turn,) = stub.model_requests("gemini")
    assert result.returncode == 0, result.stderr
    assert "read_file" in turn.tools and "write_file" not in turn.tools


def test_gemini_api_error_exits_with_the_status(gemini_bin: Path, cli_run: Any) -> None:
    """An API error: empty stdout, a JSON ``error`` object ending stderr, exit = status % 256."""
    with StubLLMServer(Script(default=Reply.fail(400, "scripted refusal"))) as stub:
        result = cli_run.run(_gemini(gemini_bin, "hi"), _env(cli_run, stub))
    # Stack traces come first on stderr; the JSON report is the last top-level object.
    error = json.loads(result.stderr[result.stderr.rindex("\n{") :])["error"]
    assert result.stdout == ""
    assert result.returncode == 400 % 256
    assert error["code"] == 400 and "scripted refusal" in error["message"]


def test_gemini_hangs_while_the_model_stalls(gemini_bin: Path, cli_run: Any) -> None:
    """A stalled stream keeps gemini waiting (a caller's timeout must end it)."""
    with StubLLMServer(Script(gemini=[Rule(Reply.stall("thinking"))])) as stub:
        cli_run.assert_hangs(_gemini(gemini_bin, "hi"), _env(cli_run, stub), stub)
