"""The stub's OpenAI Chat Completions and Responses APIs, exercised with the ``openai`` SDK."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import openai
import pytest

from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall

PostJson = Callable[..., Any]


def _client(stub: StubLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=stub.openai_url, api_key="sk-test", max_retries=0, timeout=10)


def test_chat_completion_non_streaming() -> None:
    """A plain chat completion carries the text and token usage."""
    with StubLLMServer(Script(openai=[Rule(Reply(text="hello"))])) as stub:
        completion = _client(stub).chat.completions.create(
            model="gpt-5.5", messages=[{"role": "user", "content": "hi"}]
        )
        (request,) = stub.requests_for("openai", api="chat")
    assert completion.choices[0].message.content == "hello"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.total_tokens == 120
    assert request.prompt == "hi"


def test_chat_completion_streaming_with_usage() -> None:
    """A streamed chat completion yields the text and, when asked, a usage chunk."""
    with StubLLMServer(Script(openai=[Rule(Reply(text="streamed"))])) as stub:
        chunks = list(
            _client(stub).chat.completions.create(
                model="gpt-5.5",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 20


def test_chat_tool_call() -> None:
    """A tool call reply is a ``tool_calls`` message with JSON arguments."""
    reply = Reply(tool_calls=(ToolCall("lookup", {"q": "x"}),))
    with StubLLMServer(Script(openai=[Rule(reply)])) as stub:
        completion = _client(stub).chat.completions.create(
            model="gpt-5.5",
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "function", "function": {"name": "lookup", "parameters": {}}}],
        )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    call = choice.message.tool_calls[0]
    assert call.type == "function"
    assert (call.function.name, json.loads(call.function.arguments)) == ("lookup", {"q": "x"})


def test_chat_structured_output_is_json_content() -> None:
    """A structured reply is the JSON text the SDK's ``parse`` helpers expect."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    script = Script(openai=[Rule(Reply.json({"ok": True}), Match(schema=True))])
    with StubLLMServer(script) as stub:
        completion = _client(stub).chat.completions.create(
            model="gpt-5.5",
            messages=[{"role": "user", "content": "hi"}],
            response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": schema}},
        )
    assert json.loads(completion.choices[0].message.content or "") == {"ok": True}


def test_responses_stream_text() -> None:
    """The Responses API stream yields text deltas and a completed response with usage."""
    with StubLLMServer(Script(openai=[Rule(Reply(text="from responses"))])) as stub:
        events = list(_client(stub).responses.create(model="gpt-5.5", input="hi", stream=True))
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    completed = events[-1].response  # type: ignore[union-attr]
    assert completed.output_text == "from responses"
    assert completed.usage is not None and completed.usage.output_tokens == 20


def test_responses_function_call() -> None:
    """A tool declared as a function gets a ``function_call`` item with JSON arguments."""
    reply = Reply(tool_calls=(ToolCall("exec_command", {"cmd": "ls"}),))
    tools: Any = [{"type": "function", "name": "exec_command", "parameters": {}}]
    with StubLLMServer(Script(openai=[Rule(reply)])) as stub:
        response = _client(stub).responses.create(model="gpt-5.5", input="hi", tools=tools)
    (item,) = response.output
    assert item.type == "function_call"
    assert (item.name, json.loads(item.arguments)) == ("exec_command", {"cmd": "ls"})


def test_responses_custom_tool_call_for_freeform_tool(post_json: PostJson) -> None:
    """A freeform (``custom``) tool such as codex's apply_patch gets its raw ``input``."""
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
    reply = Reply(tool_calls=(ToolCall("apply_patch", input=patch),))
    body = {
        "model": "gpt-5.5",
        "stream": True,
        "input": [{"type": "message", "role": "user", "content": "write"}],
        "tools": [{"type": "custom", "name": "apply_patch"}],
    }
    with StubLLMServer(Script(openai=[Rule(reply)])) as stub:
        events = post_json(stub.openai_url + "/responses", body).sse()
    done = [data["item"] for name, data in events if name == "response.output_item.done"]
    assert done == [{**done[0], "type": "custom_tool_call", "name": "apply_patch", "input": patch}]
    assert any(name == "response.custom_tool_call_input.delta" for name, _ in events)


def test_responses_view_sees_instructions_and_tool_output(post_json: PostJson) -> None:
    """Developer messages count as system text; a trailing call output is a tool result."""
    body = {
        "model": "gpt-5.5",
        "instructions": "Be brief.",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "sandbox: read-only"}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "review it"}],
            },
            {"type": "function_call_output", "call_id": "c1", "output": "exit 0"},
        ],
        "text": {"format": {"type": "json_schema", "name": "x", "schema": {}}},
    }
    with StubLLMServer() as stub:
        post_json(stub.openai_url + "/responses", body)
        (request,) = stub.requests_for("openai")
    assert request.system == "Be brief.\nsandbox: read-only"
    assert request.prompt == "review it"
    assert request.tool_result and request.last == "exit 0"
    assert request.schema


def test_error_reply_raises_sdk_error_with_status() -> None:
    """An error reply reaches the SDK as the matching exception and message."""
    with (
        StubLLMServer(Script(openai=[Rule(Reply.fail(429, "slow down"))])) as stub,
        pytest.raises(openai.RateLimitError, match="slow down"),
    ):
        _client(stub).chat.completions.create(
            model="gpt-5.5", messages=[{"role": "user", "content": "hi"}]
        )


def test_error_reply_can_ask_the_client_to_retry_later() -> None:
    """``retry_after`` (Python or YAML) is sent as the ``Retry-After`` header."""
    script = Script.from_dict({"openai": [{"error": {"status": 429, "retry_after": 7}}]})
    with (
        StubLLMServer(script) as stub,
        pytest.raises(openai.RateLimitError) as raised,
    ):
        _client(stub).chat.completions.create(
            model="gpt-5.5", messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.response.headers["retry-after"] == "7"
