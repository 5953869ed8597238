"""The stub server's script format: YAML loading and request matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.testing import (
    LoggedRequest,
    Match,
    Reply,
    Rule,
    Script,
    ScriptError,
    ToolCall,
    load_script,
)

YAML_SCRIPT = """
default: {text: "fallback"}
anthropic:
  - match: {prompt: "write the file", tool_result: false}
    tool:
      name: Write
      args: {file_path: out.txt, content: "hi\\n"}
  - match: {tool_result: true}
    text: Wrote it.
openai:
  - json: {verdict: approve}
    times: always
gemini:
  - error: {status: 429, message: slow down}
  - hang: true
"""


def _request(**fields: object) -> LoggedRequest:
    base: dict[str, object] = {
        "seq": 1,
        "time": 0.0,
        "provider": "anthropic",
        "api": "messages",
        "method": "POST",
        "path": "/v1/messages",
    }
    return LoggedRequest(**{**base, **fields})  # type: ignore[arg-type]


def test_yaml_script_builds_rules_per_provider(tmp_path: Path) -> None:
    """A YAML script becomes per-provider rules with replies, matches and a default."""
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT)
    script = load_script(path)
    assert script.default == Reply(text="fallback")
    write, done = script.anthropic
    assert isinstance(write, Rule) and isinstance(done, Rule)
    assert write.match == Match(prompt="write the file", tool_result=False)
    assert write.reply.tool_calls == (
        ToolCall("Write", {"file_path": "out.txt", "content": "hi\n"}),
    )
    assert done.reply.text == "Wrote it."
    (verdict,) = script.openai
    assert isinstance(verdict, Rule)
    assert verdict.reply.structured == {"verdict": "approve"} and verdict.times is None
    error, hang = script.gemini
    assert isinstance(error, Rule) and isinstance(hang, Rule)
    assert error.reply.error is not None and error.reply.error.status == 429
    assert hang.reply.hang


def test_yaml_unknown_key_is_rejected_with_entry_name(tmp_path: Path) -> None:
    """A typo in an entry is an error naming the provider and index, not a silent no-op."""
    path = tmp_path / "script.yaml"
    path.write_text("openai:\n  - text: ok\n  - txet: typo\n")
    with pytest.raises(ScriptError, match=r"openai\[1\]: unknown key\(s\): txet"):
        load_script(path)


def test_match_prompt_ignores_tool_results_but_last_sees_them() -> None:
    """``prompt`` looks at user-authored text only; ``last`` at the latest message."""
    request = _request(prompt="please review", last="tool output: 42", tool_result=True)
    assert Match(prompt="review").accepts(request)
    assert not Match(prompt="tool output").accepts(request)
    assert Match(last="tool output", tool_result=True).accepts(request)


def test_match_model_is_a_glob_and_all_fields_must_hold() -> None:
    """``model`` is an fnmatch glob, and every field set must match."""
    request = _request(model="claude-haiku-4-5", tools=("Write",))
    assert Match(model="claude-haiku-*").accepts(request)
    assert not Match(model="claude-opus-*").accepts(request)
    assert not Match(model="claude-haiku-*", tool="Edit").accepts(request)


def test_reply_shorthands_build_the_expected_replies() -> None:
    """The Reply class methods are shorthands for the common reply kinds."""
    assert Reply.tool("Write", text="ok", file_path="a").tool_calls == (
        ToolCall("Write", {"file_path": "a"}),
    )
    assert Reply.json([1]).structured == [1]
    failure = Reply.fail(503, "down").error
    assert failure is not None and (failure.status, failure.message) == (503, "down")
    assert Reply.stall("partial") == Reply(text="partial", hang=True)


def test_script_from_dict_accepts_plain_string_default() -> None:
    """A default given as a plain string is a text reply."""
    assert Script.from_dict({"default": "hello"}).default == Reply(text="hello")
