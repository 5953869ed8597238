"""The stub's Gemini ``generateContent`` API, exercised with raw HTTP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from phasegate.testing import Reply, Rule, Script, StubLLMServer, ToolCall

PostJson = Callable[..., Any]
HEADERS = {"x-goog-api-key": "sk-test"}
MODEL_PATH = "/v1beta/models/gemini-2.5-flash"


def _body(**extra: Any) -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": "hello"}]}],
        "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
        **extra,
    }


def test_generate_content_returns_candidate_text_and_usage(post_json: PostJson) -> None:
    """``:generateContent`` answers one candidate with the text and usage metadata."""
    with StubLLMServer(Script(gemini=[Rule(Reply(text="hi there"))])) as stub:
        answer = post_json(stub.url + MODEL_PATH + ":generateContent", _body(), HEADERS).json()
        (request,) = stub.requests_for("gemini")
    candidate = answer["candidates"][0]
    assert candidate["content"] == {"role": "model", "parts": [{"text": "hi there"}]}
    assert candidate["finishReason"] == "STOP"
    assert answer["usageMetadata"]["totalTokenCount"] == 120
    assert (request.model, request.system, request.prompt) == (
        "gemini-2.5-flash",
        "You are Gemini CLI.",
        "hello",
    )


def test_stream_generate_content_emits_sse_chunks(post_json: PostJson) -> None:
    """``:streamGenerateContent?alt=sse`` streams data-only SSE chunks, the last finished."""
    reply = Reply(text="Writing.", tool_calls=(ToolCall("write_file", {"file_path": "a"}),))
    with StubLLMServer(Script(gemini=[Rule(reply)])) as stub:
        url = stub.url + MODEL_PATH + ":streamGenerateContent?alt=sse"
        events = post_json(url, _body(), HEADERS).sse()
    assert all(name is None for name, _ in events)
    parts = [data["candidates"][0]["content"]["parts"] for _, data in events]
    assert parts == [
        [{"text": "Writing."}],
        [{"functionCall": {"name": "write_file", "args": {"file_path": "a"}}}],
    ]
    assert events[-1][1]["candidates"][0]["finishReason"] == "STOP"
    assert "usageMetadata" in events[-1][1]


def test_function_response_marks_a_tool_result(post_json: PostJson) -> None:
    """A trailing ``functionResponse`` part is logged as a tool result."""
    contents = [
        {"role": "user", "parts": [{"text": "write"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "write_file", "args": {}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "write_file", "response": {"output": "ok"}}}],
        },
    ]
    with StubLLMServer() as stub:
        post_json(stub.url + MODEL_PATH + ":generateContent", _body(contents=contents), HEADERS)
        (request,) = stub.requests_for("gemini")
    assert request.tool_result and request.prompt == "write"
    assert '"output": "ok"' in request.last


def test_gemini_cli_utility_call_gets_schema_value_without_spending(post_json: PostJson) -> None:
    """Gemini CLI's own JSON utility calls get a schema-shaped answer; rules stay unspent."""
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "next_speaker": {"type": "string", "enum": ["user", "model"]},
        },
        "required": ["reasoning", "next_speaker"],
    }
    body = _body(
        generationConfig={"responseMimeType": "application/json", "responseJsonSchema": schema}
    )
    headers = {**HEADERS, "User-Agent": "GeminiCLI/0.61.0/gemini-2.5-flash (linux; x64)"}
    with StubLLMServer(Script(gemini=[Rule(Reply(text="scripted"))])) as stub:
        answer = post_json(stub.url + MODEL_PATH + ":generateContent", body, headers).json()
        (request,) = stub.requests_for("gemini", include_side=True)
        left = stub.unused_rules()
    text = answer["candidates"][0]["content"]["parts"][0]["text"]
    assert text == '{"reasoning": "stub", "next_speaker": "user"}'
    assert request.side and len(left) == 1
    assert stub.requests_for("gemini") == []


def test_error_reply_has_google_error_shape(post_json: PostJson) -> None:
    """An error reply is ``{"error": {"code", "message", "status"}}`` with that status."""
    with StubLLMServer(Script(gemini=[Rule(Reply.fail(429, "quota"))])) as stub:
        result = post_json(stub.url + MODEL_PATH + ":generateContent", _body(), HEADERS)
    assert result.status == 429
    assert result.json() == {
        "error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}
    }


def test_count_tokens_is_answered_by_the_stub(post_json: PostJson) -> None:
    """``:countTokens`` returns a total without touching the script."""
    with StubLLMServer() as stub:
        answer = post_json(stub.url + MODEL_PATH + ":countTokens", _body(), HEADERS).json()
    assert answer["totalTokens"] > 0
