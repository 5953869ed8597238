"""The stub's Anthropic Messages API, exercised with raw HTTP."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall

PostJson = Callable[..., Any]
HEADERS = {"x-api-key": "sk-test", "anthropic-version": "2023-06-01"}


def _body(stream: bool, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1000,
        "stream": stream,
        "messages": [{"role": "user", "content": "hello"}],
        **extra,
    }


def test_non_streaming_reply_is_a_message_with_usage(post_json: PostJson) -> None:
    """Without ``stream`` the answer is one Message object with text and usage."""
    with StubLLMServer(Script(anthropic=[Rule(Reply(text="hi there"))])) as stub:
        message = post_json(stub.url + "/v1/messages", _body(False), HEADERS).json()
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"] == [{"type": "text", "text": "hi there"}]
    assert message["stop_reason"] == "end_turn"
    assert message["usage"]["input_tokens"] == 100 and message["usage"]["output_tokens"] == 20


def test_stream_emits_message_events_in_order(post_json: PostJson) -> None:
    """A streaming answer is the Messages SSE sequence, event names matching types."""
    with StubLLMServer(Script(anthropic=[Rule(Reply(text="streamed"))])) as stub:
        result = post_json(stub.url + "/v1/messages", _body(True), HEADERS)
    events = result.sse()
    assert result.headers["content-type"] == "text/event-stream"
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in events)
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "streamed"}
    assert events[4][1]["delta"]["stop_reason"] == "end_turn"


def test_tool_call_streams_as_tool_use_with_json_input(post_json: PostJson) -> None:
    """A tool call is a ``tool_use`` block whose input arrives as ``input_json_delta``."""
    reply = Reply(text="Writing.", tool_calls=(ToolCall("Write", {"file_path": "a.txt"}),))
    with StubLLMServer(Script(anthropic=[Rule(reply)])) as stub:
        events = post_json(stub.url + "/v1/messages", _body(True), HEADERS).sse()
    starts = [data["content_block"] for name, data in events if name == "content_block_start"]
    assert [block["type"] for block in starts] == ["text", "tool_use"]
    assert starts[1]["name"] == "Write" and starts[1]["id"].startswith("toolu_")
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert deltas[1] == {"type": "input_json_delta", "partial_json": '{"file_path": "a.txt"}'}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_structured_reply_calls_the_structured_output_tool(post_json: PostJson) -> None:
    """When Claude Code's StructuredOutput tool is offered, JSON output is a call of it."""
    tools = [{"name": "StructuredOutput", "input_schema": {"type": "object"}}]
    script = Script(anthropic=[Rule(Reply.json({"verdict": "approve"}), Match(schema=True))])
    with StubLLMServer(script) as stub:
        message = post_json(stub.url + "/v1/messages", _body(False, tools=tools), HEADERS).json()
    (block,) = message["content"]
    assert (block["type"], block["name"], block["input"]) == (
        "tool_use",
        "StructuredOutput",
        {"verdict": "approve"},
    )


def test_structured_reply_without_the_tool_is_json_text(post_json: PostJson) -> None:
    """Without that tool the structured value is sent as JSON text."""
    with StubLLMServer(Script(anthropic=[Rule(Reply.json({"a": 1}))])) as stub:
        message = post_json(stub.url + "/v1/messages", _body(False), HEADERS).json()
    assert message["content"] == [{"type": "text", "text": '{"a": 1}'}]


def test_error_reply_has_anthropic_error_shape(post_json: PostJson) -> None:
    """An error reply is the HTTP status with ``{"type": "error", "error": {...}}``."""
    with StubLLMServer(Script(anthropic=[Rule(Reply.fail(529, "busy"))])) as stub:
        result = post_json(stub.url + "/v1/messages", _body(True), HEADERS)
    assert result.status == 529
    assert result.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "busy"},
    }


def test_count_tokens_and_model_listing_answer_without_the_script(post_json: PostJson) -> None:
    """count_tokens and GET /v1/models are answered by the stub itself."""
    with StubLLMServer() as stub:
        counted = post_json(stub.url + "/v1/messages/count_tokens", _body(False), HEADERS)
        request = urllib.request.Request(stub.url + "/v1/models", headers=HEADERS)
        with urllib.request.urlopen(request, timeout=5) as response:
            models = json.loads(response.read())
    assert counted.json()["input_tokens"] > 0
    assert models["data"] and models["data"][0]["type"] == "model"


def test_view_separates_system_prompt_and_tool_results(post_json: PostJson) -> None:
    """The logged view splits system text (incl. ``role: system`` turns) from the prompt."""
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "write it"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "File created"}],
        },
        {"role": "system", "content": [{"type": "text", "text": "cwd: /work"}]},
    ]
    body = {
        **_body(False),
        "messages": messages,
        "system": "You are Claude.",
        "tools": [{"name": "Write", "input_schema": {}}],
    }
    with StubLLMServer() as stub:
        post_json(stub.url + "/v1/messages", body, HEADERS)
        (request,) = stub.requests_for("anthropic")
    assert request.system == "You are Claude.\ncwd: /work"
    assert request.prompt == "write it"
    assert request.last == "File created" and request.tool_result
    assert request.tools == ("Write",)
