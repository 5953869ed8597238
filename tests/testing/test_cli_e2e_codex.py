"""The real Codex CLI (``codex exec --json``) runs headless against the stub server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codex_homes import codex_home
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall
from phasegate.testing.clis import codex_config_args, codex_env

pytestmark = pytest.mark.cli_e2e

ADD_HELLO = "*** Begin Patch\n*** Add File: hello.txt\n+hello from codex\n*** End Patch\n"


def _codex(codex_bin: Path, stub: StubLLMServer, work: Path, *flags: str) -> list[str]:
    # The prompt goes after "--": a bare "review" would be taken for the subcommand.
    return [
        str(codex_bin),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-m",
        "gpt-5.5",
        *codex_config_args(stub.openai_url),
        "-C",
        str(work),
        *flags,
    ]


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _env(cli_run: Any) -> dict[str, str]:
    # Outside the temporary folder, or a system bwrap fails Codex's sandbox (codex_homes).
    return cli_run.env(**codex_env(codex_home(cli_run.home)))


def test_codex_output_schema_verdict_is_the_final_message(codex_bin: Path, cli_run: Any) -> None:
    """--output-schema is sent as ``text.format``; the JSON reply is the last agent message."""
    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string"}},
        "required": ["verdict"],
        "additionalProperties": False,
    }
    schema_file = cli_run.home / "schema.json"
    schema_file.write_text(json.dumps(schema))
    script = Script(openai=[Rule(Reply.json({"verdict": "approve"}), Match(schema=True))])
    with StubLLMServer(script) as stub:
        argv = _codex(
            codex_bin,
            stub,
            cli_run.work,
            "-s",
            "read-only",
            "--output-schema",
            str(schema_file),
            "--",
            "review the change",
        )
        result = cli_run.run(argv, _env(cli_run))
        (turn,) = stub.model_requests("openai")
    assert result.returncode == 0, result.stderr
    events = _events(result.stdout)
    messages = [
        e["item"]["text"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
    ]
    assert json.loads(messages[-1]) == {"verdict": "approve"}
    assert turn.body["text"]["format"]["schema"] == schema
    assert events[-1]["type"] == "turn.completed" and events[-1]["usage"]["output_tokens"] == 20


def test_codex_writes_a_file_with_apply_patch(codex_bin: Path, cli_run: Any) -> None:
    """In workspace-write mode a freeform apply_patch call creates the file."""
    script = Script(
        openai=[
            Rule(
                Reply(tool_calls=(ToolCall("apply_patch", input=ADD_HELLO),)),
                Match(tool="apply_patch"),
            ),
            Rule(Reply(text="Created hello.txt"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        argv = _codex(codex_bin, stub, cli_run.work, "-s", "workspace-write", "--", "add hello")
        result = cli_run.run(argv, _env(cli_run))
        turns = stub.model_requests("openai")
    assert result.returncode == 0, result.stderr
    assert (cli_run.work / "hello.txt").read_text() == "hello from codex\n"
    changes = [
        e["item"]
        for e in _events(result.stdout)
        if e["type"] == "item.completed" and e["item"]["type"] == "file_change"
    ]
    assert changes and changes[0]["status"] == "completed"
    assert "Success. Updated the following files" in turns[1].last


def test_codex_read_only_sandbox_rejects_the_patch(codex_bin: Path, cli_run: Any) -> None:
    """In read-only mode the same patch is refused and the model is told so."""
    script = Script(
        openai=[
            Rule(
                Reply(tool_calls=(ToolCall("apply_patch", input=ADD_HELLO),)),
                Match(tool_result=False),
            ),
            Rule(Reply(text="Could not write."), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        argv = _codex(codex_bin, stub, cli_run.work, "-s", "read-only", "--", "add hello")
        result = cli_run.run(argv, _env(cli_run))
        turns = stub.model_requests("openai")
    assert result.returncode == 0, result.stderr
    assert not (cli_run.work / "hello.txt").exists()
    assert "blocked by read-only sandbox" in turns[1].last


def test_codex_exec_resume_continues_the_thread(codex_bin: Path, cli_run: Any) -> None:
    """``codex exec resume <thread_id>`` sends the earlier turn with the new prompt."""
    script = Script(
        openai=[
            Rule(Reply(text="first answer"), Match(last="first question")),
            Rule(Reply(text="second answer"), Match(last="second question")),
        ]
    )
    with StubLLMServer(script) as stub:
        env = _env(cli_run)
        first = cli_run.run(_codex(codex_bin, stub, cli_run.work, "--", "first question"), env)
        thread_id = _events(first.stdout)[0]["thread_id"]
        argv = [
            str(codex_bin),
            "exec",
            "resume",
            "--json",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.5",
            *codex_config_args(stub.openai_url),
            thread_id,
            "--",
            "second question",
        ]
        second = cli_run.run(argv, env)
        turns = stub.model_requests("openai")
    assert second.returncode == 0, second.stderr
    assert _events(second.stdout)[0] == {"type": "thread.started", "thread_id": thread_id}
    assert "first answer" in turns[1].text


def test_codex_api_error_fails_the_turn(codex_bin: Path, cli_run: Any) -> None:
    """A provider error ends the run with exit 1 and a ``turn.failed`` event."""
    with StubLLMServer(Script(default=Reply.fail(400, "scripted refusal"))) as stub:
        argv = _codex(codex_bin, stub, cli_run.work, "--", "hi")
        result = cli_run.run(argv, _env(cli_run))
    events = _events(result.stdout)
    assert result.returncode == 1
    assert events[-1]["type"] == "turn.failed"
    assert "scripted refusal" in events[-1]["error"]["message"]


def test_codex_hangs_while_the_model_stalls(codex_bin: Path, cli_run: Any) -> None:
    """A stalled stream keeps codex waiting (its idle timeout is minutes long)."""
    with StubLLMServer(Script(openai=[Rule(Reply.stall("working"))])) as stub:
        argv = _codex(codex_bin, stub, cli_run.work, "--", "hi")
        cli_run.assert_hangs(argv, _env(cli_run), stub)
