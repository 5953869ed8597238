"""The codex backend driving the real Codex CLI against the stub server."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from backend_helpers import (
    APPROVE,
    CODEX_MODEL,
    STUB_KEY,
    VERDICT_SCHEMA,
    codex_settings,
    make_request,
)

from phasegate.agents.base import Access
from phasegate.agents.codex import CodexBackend
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall, Usage

pytestmark = pytest.mark.cli_e2e

ADD_HELLO = "*** Begin Patch\n*** Add File: hello.txt\n+hello from codex\n*** End Patch\n"


def _patch_then_text(text: str) -> Script:
    return Script(
        openai=[
            Rule(
                Reply(tool_calls=(ToolCall("apply_patch", input=ADD_HELLO),)),
                Match(tool_result=False),
            ),
            Rule(Reply(text=text), Match(tool_result=True)),
        ]
    )


def test_prompt_cwd_model_and_key_reach_codex(codex_bin: Path, home: Path, work: Path) -> None:
    """The stdin prompt, ``-C`` workdir, model and the user's key arrive at the provider."""
    with StubLLMServer(Script(default=Reply(text="hi"))) as stub:
        result = CodexBackend(codex_settings(stub, home)).run(make_request(work, "Look around."))
        (turn,) = stub.model_requests("openai")
    assert result.ok, result.error
    assert result.text == "hi"
    assert "Look around." in turn.prompt
    assert f"<cwd>{work}</cwd>" in turn.text
    assert turn.model == CODEX_MODEL
    # The key is logged redacted, so check that an Authorization header was sent at all.
    assert turn.header("authorization") is not None and STUB_KEY not in str(turn.headers)


def test_writer_applies_a_patch_in_workspace_write(codex_bin: Path, home: Path, work: Path) -> None:
    """Writers run with ``-s workspace-write``: an apply_patch call creates the file."""
    with StubLLMServer(_patch_then_text("Created hello.txt")) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        result = backend.run(make_request(work, "Add hello.", access=Access.WRITE))
    assert result.ok, result.error
    assert (work / "hello.txt").read_text() == "hello from codex\n"
    assert result.text == "Created hello.txt"


def test_read_only_role_cannot_write(codex_bin: Path, home: Path, work: Path) -> None:
    """Reviewers run with ``-s read-only``: the same patch is rejected by the sandbox."""
    with StubLLMServer(_patch_then_text("Could not write.")) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        result = backend.run(make_request(work, "Review.", access=Access.READ_ONLY))
        turns = stub.model_requests("openai")
    assert result.ok, result.error
    assert not (work / "hello.txt").exists()
    assert "blocked by read-only sandbox" in turns[1].last


def test_verdict_comes_from_the_output_schema(codex_bin: Path, home: Path, work: Path) -> None:
    """--output-schema sends the verdict schema; the final JSON message is the structured result."""
    script = Script(openai=[Rule(Reply.json(APPROVE), Match(schema=True))])
    with StubLLMServer(script) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        result = backend.run(make_request(work, "Review.", schema=VERDICT_SCHEMA))
        (turn,) = stub.model_requests("openai")
    assert result.ok, result.error
    assert result.structured == APPROVE
    assert turn.body["text"]["format"]["schema"] == VERDICT_SCHEMA


def test_non_json_answer_to_a_schema_is_returned_as_text_alone(
    codex_bin: Path, home: Path, work: Path
) -> None:
    """A final message that is not JSON although a schema was given is its text with no
    structured part, for the verdict reader to record as unclear (as for every backend)."""
    with StubLLMServer(Script(default=Reply(text="Looks fine to me"))) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        result = backend.run(make_request(work, "Review.", schema=VERDICT_SCHEMA))
    assert result.ok, result.error
    assert (result.structured, result.text) == (None, "Looks fine to me")


def test_usage_counts_cached_tokens_apart(codex_bin: Path, home: Path, work: Path) -> None:
    """turn.completed usage: cached input is separated from fresh input; the thread id is kept."""
    usage = Usage(input_tokens=100, output_tokens=20, cache_read_tokens=400)
    with StubLLMServer(Script(default=Reply(text="ok", usage=usage))) as stub:
        result = CodexBackend(codex_settings(stub, home)).run(make_request(work))
    assert result.ok, result.error
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (100, 400)
    assert result.usage.output_tokens == 20
    assert result.session_id and result.cost_usd is None


def test_resume_reports_this_calls_tokens_only(codex_bin: Path, home: Path, work: Path) -> None:
    """``exec resume`` continues the thread; Codex's cumulative usage is turned into this call's."""
    script = Script(
        openai=[
            Rule(Reply(text="first answer"), Match(last="first question")),
            Rule(Reply(text="second answer"), Match(last="second question")),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        first = backend.run(make_request(work, "first question"))
        second = backend.run(make_request(work, "second question", session=first.session_id))
        turns = stub.model_requests("openai")
    assert second.ok, second.error
    assert (second.text, second.session_id) == ("second answer", first.session_id)
    assert "first answer" in turns[1].text
    assert second.usage.input_tokens == 100 and second.usage.output_tokens == 20


def test_provider_error_fails_the_call(codex_bin: Path, home: Path, work: Path) -> None:
    """A provider error (turn.failed, exit 1) is a failed result carrying the provider's message."""
    with StubLLMServer(Script(default=Reply.fail(400, "scripted refusal"))) as stub:
        result = CodexBackend(codex_settings(stub, home)).run(make_request(work))
    assert not result.ok and result.exit_status == 1
    assert result.error is not None and "scripted refusal" in result.error


def test_hung_codex_is_killed_by_the_timeout(codex_bin: Path, home: Path, work: Path) -> None:
    """Codex's native child holds the pipes; the whole group is killed and the call returns."""
    with StubLLMServer(Script(openai=[Rule(Reply.stall("working"))])) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        started = time.monotonic()
        result = backend.run(make_request(work, timeout=3.0))
        elapsed = time.monotonic() - started
    assert not result.ok and result.exit_status == 124
    assert elapsed < 3.0 + 8.0


def test_extra_dir_is_writable_for_writers(codex_bin: Path, home: Path, tmp_path: Path) -> None:
    """``--add-dir`` makes the item folder outside the work tree writable for a writer."""
    work, item_dir = tmp_path / "tree", tmp_path / "items" / "x"
    work.mkdir()
    item_dir.mkdir(parents=True)
    patch = f"*** Begin Patch\n*** Add File: {item_dir / 'spec.md'}\n+spec\n*** End Patch\n"
    script = Script(
        openai=[
            Rule(
                Reply(tool_calls=(ToolCall("apply_patch", input=patch),)), Match(tool_result=False)
            ),
            Rule(Reply(text="done"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        settings = codex_settings(stub, home)
        # The test's folders live under /tmp, which workspace-write allows by default.
        settings["extra_args"] += [
            "-c",
            "sandbox_workspace_write.exclude_slash_tmp=true",
            "-c",
            "sandbox_workspace_write.exclude_tmpdir_env_var=true",
        ]
        backend = CodexBackend(settings)
        request = make_request(work, "Write.", access=Access.WRITE, extra_dirs=(item_dir,))
        result = backend.run(request)
    assert result.ok, result.error
    assert (item_dir / "spec.md").read_text() == "spec\n"


def _offered(home: Path, work: Path, access: Access, *extra: str) -> tuple[str, ...]:
    with StubLLMServer(Script(default=Reply(text="ok"))) as stub:
        settings = codex_settings(stub, home)
        settings["extra_args"] = [*settings["extra_args"], *extra]
        result = CodexBackend(settings).run(make_request(work, "Go.", access=access))
        (turn,) = stub.model_requests("openai")
    assert result.ok, result.error
    return turn.tools


@pytest.mark.parametrize("access", [Access.WRITE, Access.READ_ONLY])
def test_tools_no_role_needs_are_not_offered(
    codex_bin: Path, home: Path, work: Path, access: Access
) -> None:
    """Web search, image viewing and goal tracking are off for every role (fewer tokens);
    the shell Codex reads with and apply_patch stay; extra_args can turn one back on."""
    offered = set(_offered(home, work, access))
    assert {"exec_command", "apply_patch"} <= offered
    assert not offered & {"web_search", "view_image", "get_goal", "create_goal", "update_goal"}
    again = set(_offered(home, work, access, "-c", 'web_search="live"'))
    assert "web_search" in again
