"""The OpenAI Responses and Chat Completions APIs as the stub speaks them.

Codex uses ``POST /v1/responses`` (always streaming SSE); the ``openai``
Python SDK uses either that or ``POST /v1/chat/completions`` (JSON or SSE).
A tool call becomes a ``function_call`` item, or a ``custom_tool_call`` when
the request declares the tool as freeform (codex's ``apply_patch``). A call of
``tool_search`` (declared ``type: tool_search``, as codex does) becomes a
client-executed ``tool_search_call``; tools inside a ``namespace`` (codex's
MCP tools, ``mcp__SERVER``) are called with their ``namespace``, named either
bare (``create_review``) or in full (``mcp__phasegate__create_review``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from phasegate.testing.request_log import LoggedRequest, View
from phasegate.testing.script import Reply, ToolCall
from phasegate.testing.wire import Answer, flatten, json_answer, new_id, sse, sse_answer

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    403: "permission_denied",
    404: "not_found",
    413: "invalid_request_error",
    429: "rate_limit_exceeded",
}
_MODELS = ("gpt-5.5", "gpt-5.6-sol")
_TOOL_OUTPUTS = (
    "function_call_output",
    "custom_tool_call_output",
    "local_shell_call_output",
    "tool_search_output",
)


def view(api: str, body: Any) -> View:
    """Flatten a Responses or Chat Completions request to a :class:`View`."""
    if not isinstance(body, Mapping):
        return View()
    return _chat_view(body) if api == "chat" else _responses_view(body)


def _responses_view(body: Mapping[str, Any]) -> View:
    raw = body.get("input")
    items: list[Mapping[str, Any]] = (
        [{"type": "message", "role": "user", "content": raw}]
        if isinstance(raw, str)
        else [i for i in raw or [] if isinstance(i, Mapping)]
    )
    system = [str(body.get("instructions") or "")]
    system += [flatten(i.get("content")) for i in items if i.get("role") in ("system", "developer")]
    prompt = [flatten(i.get("content")) for i in items if i.get("role") == "user"]
    last = items[-1] if items else {}
    text_format = (body.get("text") or {}).get("format") or {}
    found = _discovered(items)
    return View(
        model=body.get("model"),
        stream=bool(body.get("stream")),
        system=_join(system),
        prompt=_join(prompt),
        # A tool search's output is a list of tool definitions: its names stand for it.
        last=_join(list(_tool_names(last.get("tools") or [])))
        if last.get("type") == "tool_search_output"
        else flatten(last),
        text=_join([system[0], *(flatten(i) for i in items)]),
        tools=tuple(dict.fromkeys([*_tool_names(body.get("tools") or []), *_tool_names(found)])),
        tool_result=last.get("type") in _TOOL_OUTPUTS,
        schema=text_format.get("type") == "json_schema",
    )


def _chat_view(body: Mapping[str, Any]) -> View:
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    system = [
        flatten(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    ]
    prompt = [flatten(m.get("content")) for m in messages if m.get("role") == "user"]
    last = messages[-1] if messages else {}
    response_format = body.get("response_format") or {}
    return View(
        model=body.get("model"),
        stream=bool(body.get("stream")),
        system=_join(system),
        prompt=_join(prompt),
        last=flatten(last.get("content")),
        text=_join([flatten(m.get("content")) for m in messages]),
        tools=tuple(_tool_names(body.get("tools") or [])),
        tool_result=last.get("role") == "tool",
        schema=response_format.get("type") in ("json_schema", "json_object"),
    )


def _tool_names(tools: Sequence[Any]) -> Iterator[str]:
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "namespace":
            yield from _tool_names(tool.get("tools") or [])
        elif isinstance(tool.get("function"), Mapping):
            yield str(tool["function"].get("name"))
        else:
            yield str(tool.get("name") or tool.get("type"))


def _discovered(items: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Tools a client-side tool search loaded into the conversation (offered from then on)."""
    return [
        tool
        for item in items
        if item.get("type") == "tool_search_output"
        for tool in item.get("tools") or []
    ]


def side_reply(request: LoggedRequest) -> tuple[str, Reply] | None:
    """Codex makes no side requests in ``exec`` mode that need a special answer."""
    return None


def render(request: LoggedRequest, reply: Reply) -> Answer:
    """A Responses or Chat Completions answer (SSE or JSON) carrying ``reply``."""
    if request.api == "chat":
        return _render_chat(request, reply)
    return _render_responses(request, reply)


def error(status: int, message: str, kind: str = "") -> Answer:
    """An OpenAI-shaped error body."""
    kind = kind or _ERROR_TYPES.get(status, "server_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return json_answer(body, status, {"x-request-id": new_id("req_stub_")})


def builtin(request: LoggedRequest) -> Answer | None:
    """The model listing (``GET /v1/models``)."""
    if request.api != "models":
        return None
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in _MODELS]
    return json_answer({"object": "list", "data": data})


# -- Responses API -----------------------------------------------------------------


def _answer_text(reply: Reply) -> str:
    if reply.structured is None:
        return reply.text
    return reply.text + json.dumps(reply.structured)


@dataclass(frozen=True)
class _Declared:
    """How the request declares a tool: its type and, inside a namespace, the namespace."""

    kind: str
    namespace: str | None = None


def _declared_tools(body: Any) -> dict[str, _Declared]:
    """Tool name -> declaration, from ``tools`` and from tool searches in ``input``.

    A namespaced tool is listed under its bare name (unless a top-level tool
    has it) and under ``NAMESPACE__NAME``, the name codex itself gives it.
    """
    declared: dict[str, _Declared] = {}
    if not isinstance(body, Mapping):
        return declared
    raw = body.get("input")
    items = [i for i in raw if isinstance(i, Mapping)] if isinstance(raw, list) else []

    def walk(tools: Sequence[Any], namespace: str | None) -> None:
        for tool in tools:
            if not isinstance(tool, Mapping):
                continue
            kind = str(tool.get("type", "function"))
            name = str(tool.get("name") or kind)
            if kind == "namespace":
                walk(tool.get("tools") or [], name)
            elif namespace is None:
                declared[name] = _Declared(kind)
            else:
                declared.setdefault(name, _Declared(kind, namespace))
                declared[f"{namespace}__{name}"] = _Declared(kind, namespace)

    walk(body.get("tools") or [], None)
    walk(_discovered(items), None)
    return declared


def _call_item(call: ToolCall, declared: _Declared | None) -> dict[str, Any]:
    call_id = call.id or new_id("call_stub_")
    kind = declared.kind if declared else "function"
    if kind == "tool_search":
        # Codex runs the search itself ("client") and sends the result back.
        return {
            "type": "tool_search_call",
            "id": new_id("tsc_stub_"),
            "call_id": call_id,
            "execution": "client",
            "arguments": dict(call.args),
            "status": "completed",
        }
    if kind == "custom":
        text = call.input if call.input is not None else json.dumps(dict(call.args))
        return {
            "type": "custom_tool_call",
            "id": new_id("ctc_stub_"),
            "call_id": call_id,
            "name": call.name,
            "input": text,
            "status": "completed",
        }
    arguments = call.input if call.input is not None else json.dumps(dict(call.args))
    item = {
        "type": "function_call",
        "id": new_id("fc_stub_"),
        "call_id": call_id,
        "name": call.name,
        "arguments": arguments,
        "status": "completed",
    }
    namespace = declared.namespace if declared else None
    if namespace is None and declared is None and "__" in call.name:
        # Not offered (yet): codex still resolves a deferred tool by namespace and name.
        namespace = call.name.rsplit("__", 1)[0]
    if namespace is not None:
        item["namespace"] = namespace
        item["name"] = call.name.removeprefix(f"{namespace}__")
    return item


def _render_responses(request: LoggedRequest, reply: Reply) -> Answer:
    text = _answer_text(reply)
    declared = _declared_tools(request.body)
    message = {
        "type": "message",
        "id": new_id("msg_stub_"),
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    calls = [_call_item(call, declared.get(call.name)) for call in reply.tool_calls]
    output = ([message] if text or not calls else []) + calls
    usage = {
        "input_tokens": reply.usage.input_tokens + reply.usage.cache_read_tokens,
        "input_tokens_details": {"cached_tokens": reply.usage.cache_read_tokens},
        "output_tokens": reply.usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.usage.input_tokens
        + reply.usage.cache_read_tokens
        + reply.usage.output_tokens,
    }
    response = {
        "id": new_id("resp_stub_"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": request.model or _MODELS[0],
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }
    if not request.stream:
        return json_answer(response)
    seq = iter(range(1_000_000))

    def event(kind: str, **data: Any) -> bytes:
        return sse({"type": kind, "sequence_number": next(seq), **data}, kind)

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    events = [
        event("response.created", response=pending),
        event("response.in_progress", response=pending),
    ]
    for index, item in enumerate(output):
        events += _item_events(event, index, item, partial=reply.hang)
        if reply.hang:
            return sse_answer(events, stall=True)
    events.append(event("response.completed", response=response))
    return sse_answer(events)


def _item_events(event: Any, index: int, item: dict[str, Any], partial: bool) -> list[bytes]:
    item_id = item["id"]
    if item["type"] == "message":
        text = item["content"][0]["text"]
        empty_part = {"type": "output_text", "text": "", "annotations": []}
        events = [
            event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            ),
            event(
                "response.content_part.added",
                item_id=item_id,
                output_index=index,
                content_index=0,
                part=empty_part,
            ),
            event(
                "response.output_text.delta",
                item_id=item_id,
                output_index=index,
                content_index=0,
                delta=text,
            ),
        ]
        if partial:
            return events
        return [
            *events,
            event(
                "response.output_text.done",
                item_id=item_id,
                output_index=index,
                content_index=0,
                text=text,
            ),
            event(
                "response.content_part.done",
                item_id=item_id,
                output_index=index,
                content_index=0,
                part=item["content"][0],
            ),
            event("response.output_item.done", output_index=index, item=item),
        ]
    if item["type"] == "tool_search_call":  # arguments are an object: no deltas
        return [
            event("response.output_item.added", output_index=index, item=item),
            event("response.output_item.done", output_index=index, item=item),
        ]
    field, kind = (
        ("input", "custom_tool_call_input")
        if item["type"] == "custom_tool_call"
        else ("arguments", "function_call_arguments")
    )
    return [
        event(
            "response.output_item.added",
            output_index=index,
            item={**item, field: "", "status": "in_progress"},
        ),
        event(f"response.{kind}.delta", item_id=item_id, output_index=index, delta=item[field]),
        event(f"response.{kind}.done", item_id=item_id, output_index=index, **{field: item[field]}),
        event("response.output_item.done", output_index=index, item=item),
    ]


# -- Chat Completions ----------------------------------------------------------------


def _render_chat(request: LoggedRequest, reply: Reply) -> Answer:
    text = _answer_text(reply)
    calls = [
        {
            "id": call.id or new_id("call_stub_"),
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": call.input if call.input is not None else json.dumps(dict(call.args)),
            },
        }
        for call in reply.tool_calls
    ]
    finish = "tool_calls" if calls else "stop"
    usage = {
        "prompt_tokens": reply.usage.input_tokens,
        "completion_tokens": reply.usage.output_tokens,
        "total_tokens": reply.usage.input_tokens + reply.usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.usage.cache_read_tokens},
    }
    base = {
        "id": new_id("chatcmpl-stub"),
        "created": int(time.time()),
        "model": request.model or _MODELS[0],
    }
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        message["tool_calls"] = calls
    if not request.stream:
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        return json_answer(
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        )

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": reason, "logprobs": None}
        return sse({**base, "object": "chat.completion.chunk", "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    if text:
        events.append(chunk({"content": text}))
    if reply.hang:
        return sse_answer(events, stall=True)
    for index, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": index, **call}]}))
    events.append(chunk({}, finish))
    options = request.body.get("stream_options") if isinstance(request.body, Mapping) else None
    if isinstance(options, Mapping) and options.get("include_usage"):
        events.append(
            sse({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        )
    events.append(sse("[DONE]"))
    return sse_answer(events)


def _join(parts: Sequence[str]) -> str:
    return "\n".join(p for p in parts if p)
