"""The claude backend driving the real Claude Code CLI against the stub server."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from backend_helpers import (
    APPROVE,
    CLAUDE_MODEL,
    STUB_KEY,
    VERDICT_SCHEMA,
    claude_settings,
    make_request,
)

from phasegate.agents.base import Access, AgentResult, McpServer
from phasegate.agents.claude import ClaudeBackend
from phasegate.testing import LoggedRequest, Match, Reply, Rule, Script, StubLLMServer, Usage

pytestmark = pytest.mark.cli_e2e


def test_prompt_cwd_and_model_reach_claude(claude_bin: Path, home: Path, work: Path) -> None:
    """The prompt arrives through stdin, claude runs in the workdir with the configured model."""
    with StubLLMServer(Script(default=Reply(text="hi"))) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(work, "Describe the ratelimit module."))
        (turn,) = stub.model_requests("anthropic")
    assert result.ok, result.error
    assert result.text == "hi"
    assert "Describe the ratelimit module." in turn.prompt
    assert f"Primary working directory: {work}" in turn.text
    assert turn.model == CLAUDE_MODEL


def test_writer_creates_a_file_through_the_write_tool(
    claude_bin: Path, home: Path, work: Path
) -> None:
    """Writers run in acceptEdits mode: a Write tool call creates the file."""
    target = work / "spec.md"
    script = Script(
        anthropic=[
            Rule(
                Reply.tool("Write", file_path=str(target), content="# Spec\n"), Match(tool="Write")
            ),
            Rule(Reply(text="Wrote spec.md"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(work, "Write the spec.", access=Access.WRITE))
    assert result.ok, result.error
    assert target.read_text() == "# Spec\n"
    assert result.text == "Wrote spec.md"


def test_read_only_role_cannot_write(claude_bin: Path, home: Path, work: Path) -> None:
    """A reviewer is not offered Write; a scripted Write call is refused and nothing is written."""
    target = work / "hacked.txt"
    script = Script(
        anthropic=[
            Rule(Reply.tool("Write", file_path=str(target), content="x"), Match(tool_result=False)),
            Rule(Reply(text="could not write"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(work, "Review.", access=Access.READ_ONLY))
        first, second = stub.model_requests("anthropic")
    assert result.ok, result.error
    assert not target.exists()
    assert "Write" not in first.tools and "Read" in first.tools
    assert "No such tool available: Write" in second.last


def test_writer_cannot_write_outside_the_work_tree(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    """acceptEdits covers the working directory only: a Write elsewhere is denied."""
    work, outside = tmp_path / "tree", tmp_path / "elsewhere.txt"
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
    assert result.ok, result.error
    assert not outside.exists()
    assert "permission denied for: Write" in result.stderr


def test_extra_dir_is_writable_for_writers(claude_bin: Path, home: Path, tmp_path: Path) -> None:
    """A folder given in ``extra_dirs`` (the item folder outside the work tree) accepts writes."""
    work, item_dir = tmp_path / "tree", tmp_path / "items" / "x"
    work.mkdir()
    item_dir.mkdir(parents=True)
    target = item_dir / "spec.md"
    script = Script(
        anthropic=[
            Rule(Reply.tool("Write", file_path=str(target), content="spec\n"), Match(tool="Write")),
            Rule(Reply(text="done"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        request = make_request(work, "Write.", access=Access.WRITE, extra_dirs=(item_dir,))
        result = backend.run(request)
    assert result.ok, result.error
    assert target.read_text() == "spec\n"


def test_verdict_arrives_as_structured_output(claude_bin: Path, home: Path, work: Path) -> None:
    """--json-schema offers StructuredOutput with the verdict schema; its input is the result."""
    script = Script(anthropic=[Rule(Reply.json(APPROVE), Match(schema=True))])
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(work, "Review.", schema=VERDICT_SCHEMA))
        (turn,) = stub.model_requests("anthropic")
    assert result.ok, result.error
    assert result.structured == APPROVE
    tool = next(t for t in turn.body["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"] == VERDICT_SCHEMA


def test_free_text_instead_of_structured_output_is_returned_as_text_alone(
    claude_bin: Path, home: Path, work: Path
) -> None:
    """No StructuredOutput call: the answer is its text with no structured part, for the
    verdict reader to record as unclear (as every schema-enforcing backend does)."""
    with StubLLMServer(Script(default=Reply(text="APPROVED\nI think it is fine"))) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(work, "Review.", schema=VERDICT_SCHEMA))
    assert result.ok, result.error
    assert result.structured is None
    assert result.text.startswith("APPROVED")


def test_session_tokens_and_cost_are_recorded(claude_bin: Path, home: Path, work: Path) -> None:
    """Session id, token counts (cache tokens apart) and total_cost_usd come back in the result."""
    usage = Usage(input_tokens=300, output_tokens=50, cache_read_tokens=1000, cache_write_tokens=70)
    with StubLLMServer(Script(default=Reply(text="ok", usage=usage))) as stub:
        result = ClaudeBackend(claude_settings(stub, home)).run(make_request(work))
    assert result.ok, result.error
    assert result.session_id and len(result.session_id) == 36
    assert (result.usage.input_tokens, result.usage.output_tokens) == (300, 50)
    assert (result.usage.cache_read_tokens, result.usage.cache_write_tokens) == (1000, 70)
    assert result.cost_usd is not None and result.cost_usd > 0


def test_resume_continues_the_session(claude_bin: Path, home: Path, work: Path) -> None:
    """A request with ``session`` runs ``--resume``: the model sees the earlier turn."""
    script = Script(
        anthropic=[
            Rule(Reply(text="first answer"), Match(last="first question")),
            Rule(Reply(text="second answer"), Match(last="second question")),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        first = backend.run(make_request(work, "first question"))
        second = backend.run(make_request(work, "second question", session=first.session_id))
        turns = stub.model_requests("anthropic")
    assert second.ok, second.error
    assert second.session_id == first.session_id
    assert "first answer" in turns[1].text


def test_api_error_is_judged_by_is_error_and_exit_status(
    claude_bin: Path, home: Path, work: Path
) -> None:
    """A provider error (subtype still "success") is a failed result with the status and message."""
    with StubLLMServer(Script(default=Reply.fail(500, "scripted outage"))) as stub:
        result = ClaudeBackend(claude_settings(stub, home)).run(make_request(work))
    assert not result.ok
    assert result.exit_status == 1
    assert result.error is not None
    assert "API status 500" in result.error and "scripted outage" in result.error


def test_hung_claude_is_killed_by_the_timeout(claude_bin: Path, home: Path, work: Path) -> None:
    """A model that never answers: the call ends soon after the timeout as a failed attempt."""
    with StubLLMServer(Script(anthropic=[Rule(Reply.stall("thinking"))])) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        started = time.monotonic()
        result = backend.run(make_request(work, timeout=3.0))
        elapsed = time.monotonic() - started
    assert not result.ok and result.exit_status == 124
    assert result.error is not None and "did not finish within 3s" in result.error
    assert elapsed < 3.0 + 8.0


def test_secret_echoed_by_the_agent_is_redacted(claude_bin: Path, home: Path, work: Path) -> None:
    """The API key in phasegate's environment never comes back in the result's text."""
    echo = f"My key is {STUB_KEY} and a token ghp_{'a' * 36}"
    with StubLLMServer(Script(default=Reply(text=echo))) as stub:
        result = ClaudeBackend(claude_settings(stub, home)).run(make_request(work))
    assert result.ok, result.error
    assert STUB_KEY not in result.text and "ghp_" not in result.text
    assert json.dumps(result.text).count("[REDACTED]") == 2


@pytest.mark.parametrize("access", [Access.READ_ONLY, Access.WRITE])
def test_mcp_server_tools_are_limited_to_the_listed_ones(
    claude_bin: Path, home: Path, work: Path, access: Access
) -> None:
    """An MCP server's listed tool runs; its other tools are denied, for readers and writers."""
    server = McpServer(
        name="demo",
        command=sys.executable,
        args=(str(Path(__file__).with_name("demo_mcp_server.py")),),
        tools=("read_state",),
    )

    def agent(request: LoggedRequest) -> Reply:
        if not request.tool_result:
            return Reply.tool("mcp__demo__read_state")
        if "called read_state" in request.last:
            return Reply.tool("mcp__demo__write_state")
        return Reply(text="done")

    with StubLLMServer(Script(anthropic=[agent])) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        result = backend.run(make_request(work, access=access, mcp_servers=(server,)))
        turns = stub.model_requests("anthropic")
    assert result.ok, result.error
    assert "called read_state" in turns[1].last
    assert "write_state" in turns[2].last and "called write_state" not in turns[2].last
    assert "permission denied for: mcp__demo__write_state" in result.stderr


def _first_writer_request(
    home: Path, work: Path, script: Script, **settings: object
) -> tuple[AgentResult, list[LoggedRequest]]:
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home, **settings))
        result = backend.run(make_request(work, "Write the spec.", access=Access.WRITE))
        turns = stub.model_requests("anthropic")
    return result, turns


def test_writer_is_offered_exactly_the_default_tool_set(
    claude_bin: Path, home: Path, work: Path
) -> None:
    """Least privilege and fewer tokens: Read, Glob, Grep, Edit, Write and nothing else
    (the full set made the same request 93 KB instead of 41 KB)."""
    result, (turn,) = _first_writer_request(home, work, Script(default=Reply(text="ok")))
    assert result.ok, result.error
    assert sorted(turn.tools) == ["Edit", "Glob", "Grep", "Read", "Write"]


def test_tools_setting_chooses_what_a_writer_is_offered(
    claude_bin: Path, home: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tools`` (per backend or per role) plus what ``allowed_tools`` pre-approves is the
    set offered: an allowed Bash rule adds Bash."""
    monkeypatch.setenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "0")  # runs without bwrap too
    script = Script(default=Reply(text="ok"))
    narrowed = {"tools": ["Read", "Edit"], "allowed_tools": ["Read"]}
    _, (narrow,) = _first_writer_request(home, work, script, **narrowed)
    assert sorted(narrow.tools) == ["Edit", "Read"]
    allowed = ["Read", "Bash(python -m pytest:*)"]
    _, (tested,) = _first_writer_request(home, work, script, tools=["Read"], allowed_tools=allowed)
    assert sorted(tested.tools) == ["Bash", "Read"]


def test_explicit_tool_set_makes_the_request_smaller(
    claude_bin: Path, home: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stub's request log: the default writer set sends well under 60% of the bytes
    Claude Code's full set (``tools: [default]``) sends."""
    monkeypatch.setenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "0")  # runs without bwrap too
    script = Script(default=Reply(text="ok"))
    _, (explicit,) = _first_writer_request(home, work, script)
    _, (full,) = _first_writer_request(home, work, script, tools=["default"])
    assert len(full.tools) > 10
    assert len(json.dumps(explicit.body)) < 0.6 * len(json.dumps(full.body))


@pytest.mark.parametrize("command", ["echo hi > inside.txt", "uname -a", "git log"])
def test_bash_outside_the_configured_tools_is_denied(
    claude_bin: Path, home: Path, work: Path, command: str
) -> None:
    """Claude Code runs read-only commands and, in acceptEdits, writes in the tree without
    asking; with Bash not listed in config it is not offered at all, so nothing runs."""
    script = Script(
        anthropic=[
            Rule(Reply.tool("Bash", command=command), Match(tool_result=False)),
            Rule(Reply(text="done"), Match(tool_result=True)),
        ]
    )
    result, turns = _first_writer_request(home, work, script)
    assert result.ok, result.error
    assert "No such tool available: Bash" in turns[-1].last
    assert not (work / "inside.txt").exists()
    assert "Linux" not in turns[-1].last


def test_base_url_ending_in_v1_is_normalised(claude_bin: Path, home: Path, work: Path) -> None:
    """``base_url: http://host/v1`` (an OpenAI habit) still reaches ``/v1/messages``."""
    with StubLLMServer(Script(default=Reply(text="hi"))) as stub:
        settings = claude_settings(stub, home, base_url=stub.url + "/v1/")
        result = ClaudeBackend(settings).run(make_request(work))
        (turn,) = stub.model_requests("anthropic")
    assert result.ok, result.error
    assert turn.path == "/v1/messages"


def test_max_budget_usd_reaches_claude_and_stops_it_after_the_turn_that_passes_it(
    claude_bin: Path, home: Path, work: Path
) -> None:
    """A request's ``max_budget_usd`` (what the item's budget caps leave) is passed as
    ``--max-budget-usd``: a task taking two model turns ($0.09 each at Sonnet's prices)
    stops after the first with a failed result; without it both turns run."""
    (work / "notes.md").write_text("hello\n")
    expensive = Usage(input_tokens=20_000, output_tokens=2_000)
    read = Reply.tool("Read", file_path=str(work / "notes.md"))
    script = Script(
        anthropic=[
            Rule(
                Reply(tool_calls=read.tool_calls, usage=expensive), Match(tool_result=False), None
            ),
            Rule(Reply(text="done", usage=expensive), Match(tool_result=True), None),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = ClaudeBackend(claude_settings(stub, home))
        capped = backend.run(make_request(work, "Read notes.md.", max_budget_usd=0.01))
        capped_turns = len(stub.model_requests("anthropic"))
        free = backend.run(make_request(work, "Read notes.md."))
        all_turns = len(stub.model_requests("anthropic"))
    assert not capped.ok and capped.error is not None
    assert "Reached maximum budget ($0.01)" in capped.error
    assert capped_turns == 1
    assert capped.cost_usd is not None and capped.cost_usd > 0.01  # reported, so counted
    assert free.ok, free.error
    assert free.text == "done" and all_turns - capped_turns == 2
