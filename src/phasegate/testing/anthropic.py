"""The Anthropic Messages API as the stub speaks it (what Claude Code calls).

Endpoints: ``POST /v1/messages`` (SSE when ``stream`` is true, JSON
otherwise), ``POST /v1/messages/count_tokens`` and ``GET /v1/models[/{id}]``.
Claude Code's ``--json-schema`` is a tool named ``StructuredOutput`` whose
input schema is the user's schema: a structured reply becomes a call of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from phasegate.testing.request_log import LoggedRequest, View
from phasegate.testing.script import Reply
from phasegate.testing.wire import Answer, flatten, json_answer, new_id, sse, sse_answer

#: The tool Claude Code offers for ``--json-schema``; calling it is the answer.
STRUCTURED_TOOL = "StructuredOutput"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}

_MODELS = ("claude-opus-4-1", "claude-sonnet-4-5", "claude-haiku-4-5")


def view(api: str, body: Any) -> View:
    """Flatten a Messages request (``system`` plus ``messages``) to a :class:`View`."""
    if not isinstance(body, Mapping):
        return View()
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    # Claude Code also sends mid-conversation ``role: system`` messages.
    system = [flatten(body.get("system"))]
    system += [flatten(m.get("content")) for m in messages if m.get("role") == "system"]
    turns = [m for m in messages if m.get("role") != "system"]
    prompt = [_user_text(m.get("content")) for m in turns if m.get("role") == "user"]
    last = turns[-1] if turns else {}
    tools = tuple(
        str(t.get("name") or t.get("type"))
        for t in body.get("tools") or []
        if isinstance(t, Mapping)
    )
    output_config = body.get("output_config") or {}
    native_schema = bool(body.get("output_format")) or (
        isinstance(output_config, Mapping) and bool(output_config.get("format"))
    )
    return View(
        model=body.get("model"),
        stream=bool(body.get("stream")),
        system=_join(system),
        prompt=_join(prompt),
        last=flatten(last.get("content")),
        text=_join([*system, *(flatten(m.get("content")) for m in turns)]),
        tools=tools,
        tool_result=last.get("role") == "user" and bool(_tool_results(last)),
        schema=STRUCTURED_TOOL in tools or native_schema,
    )


def side_reply(request: LoggedRequest) -> tuple[str, Reply] | None:
    """Claude Code's warm-up requests (a lone ``Warmup`` user message, sent at start-up
    by 2.0.x releases, one per model) get ``OK``; nothing else is intercepted.

    (With nonessential traffic disabled, recent releases send only conversation
    turns: after a valid ``StructuredOutput`` call Claude Code ends the run
    without sending the tool result back; an invalid one comes back as an
    error tool result, which a script may want to answer.)
    """
    if request.prompt.strip() == "Warmup" and not request.tool_result:
        return "side claude-warmup", Reply(text="OK")
    return None


def render(request: LoggedRequest, reply: Reply) -> Answer:
    """A Messages API answer (SSE or JSON) carrying ``reply``."""
    blocks = _content_blocks(request, reply)
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    usage = {
        "input_tokens": reply.usage.input_tokens,
        "output_tokens": reply.usage.output_tokens,
        "cache_creation_input_tokens": reply.usage.cache_write_tokens,
        "cache_read_input_tokens": reply.usage.cache_read_tokens,
    }
    message = {
        "id": new_id("msg_stub_"),
        "type": "message",
        "role": "assistant",
        "model": request.model or _MODELS[0],
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not request.stream:
        return json_answer(message)
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events = [sse({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(blocks):
        if reply.hang and block["type"] != "text":
            break
        events += _block_events(index, block, reply.hang)
    if reply.hang:
        return sse_answer(events, stall=True)
    delta = {"stop_reason": stop, "stop_sequence": None}
    events.append(sse({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta"))
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return sse_answer(events)


def error(status: int, message: str, kind: str = "") -> Answer:
    """An Anthropic-shaped error body."""
    kind = kind or _ERROR_TYPES.get(status, "api_error")
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return json_answer(body, status, {"request-id": new_id("req_stub_")})


def builtin(request: LoggedRequest) -> Answer | None:
    """Answers for the non-generation endpoints (token counting, model listing)."""
    if request.api == "count_tokens":
        return json_answer({"input_tokens": max(1, len(request.text) // 4)})
    if request.api == "models":
        name = request.path.rstrip("/").rsplit("/", 1)[-1]
        if name != "models":
            return json_answer(_model(name))
        data = [_model(m) for m in _MODELS]
        return json_answer(
            {"data": data, "has_more": False, "first_id": _MODELS[0], "last_id": _MODELS[-1]}
        )
    return None


def _model(name: str) -> dict[str, Any]:
    return {"type": "model", "id": name, "display_name": name, "created_at": "2025-01-01T00:00:00Z"}


def _content_blocks(request: LoggedRequest, reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    if reply.structured is not None:
        if STRUCTURED_TOOL in request.tools:
            tool_id = new_id("toolu_stub_")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": STRUCTURED_TOOL,
                    "input": reply.structured,
                }
            )
        else:
            blocks.append({"type": "text", "text": json.dumps(reply.structured)})
    for call in reply.tool_calls:
        args: Any = dict(call.args) if call.input is None else {"input": call.input}
        tool_id = call.id or new_id("toolu_stub_")
        blocks.append({"type": "tool_use", "id": tool_id, "name": call.name, "input": args})
    return blocks or [{"type": "text", "text": ""}]


def _block_events(index: int, block: Mapping[str, Any], partial: bool) -> list[bytes]:
    if block["type"] == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
    else:
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    events = [
        sse(
            {"type": "content_block_start", "index": index, "content_block": start},
            "content_block_start",
        ),
        sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"),
    ]
    if not partial:
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return events


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, Sequence) and not isinstance(content, str):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _tool_results(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [b for b in _blocks(message.get("content")) if b.get("type") == "tool_result"]


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return _join([str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text"])


def _join(parts: Sequence[str]) -> str:
    return "\n".join(p for p in parts if p)
