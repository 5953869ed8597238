"""The Gemini API (``generateContent``) as the stub speaks it (what Gemini CLI calls).

Endpoints: ``POST /v1beta/models/{model}:generateContent``,
``:streamGenerateContent?alt=sse``, ``:countTokens`` and ``GET
/v1beta/models[/{model}]``. Gemini CLI runs the conversation on the
streaming endpoint and its own utilities (model routing, next-speaker and
loop checks, summaries, edit correction) on the plain one: those are the side
requests answered here without spending script entries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from phasegate.testing.request_log import LoggedRequest, View
from phasegate.testing.script import Reply
from phasegate.testing.wire import (
    Answer,
    flatten,
    json_answer,
    new_id,
    schema_instance,
    sse,
    sse_answer,
)

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_MODELS = ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite")


def view(api: str, body: Any) -> View:
    """Flatten a ``generateContent`` request (``systemInstruction`` + ``contents``)."""
    if not isinstance(body, Mapping):
        return View()
    contents = [c for c in body.get("contents") or [] if isinstance(c, Mapping)]
    system = flatten((body.get("systemInstruction") or {}).get("parts"))
    prompt = [
        str(part["text"])
        for c in contents
        if c.get("role", "user") == "user"
        for part in _parts(c)
        if "text" in part
    ]
    last = contents[-1] if contents else {}
    tools = tuple(
        str(decl.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, Mapping)
        for decl in tool.get("functionDeclarations") or []
        if isinstance(decl, Mapping)
    )
    config = body.get("generationConfig") or {}
    return View(
        stream=api == "stream_generate",
        system=system,
        prompt="\n".join(p for p in prompt if p),
        last=_parts_text(last),
        text="\n".join(s for s in [system, *(_parts_text(c) for c in contents)] if s),
        tools=tools,
        tool_result=any("functionResponse" in part for part in _parts(last)),
        schema=bool(_schema(config)) or config.get("responseMimeType") == "application/json",
    )


def side_reply(request: LoggedRequest) -> tuple[str, Reply] | None:
    """Answer Gemini CLI's utility calls (non-streaming ``generateContent``).

    Only requests from Gemini CLI (its User-Agent) count, so plain API tests
    still get scripted replies. JSON requests get the simplest value fitting
    their schema: ``next_speaker: user`` ends the turn, loop confidence 0,
    complexity 1; other utility calls get a short text.
    """
    agent = request.header("user-agent") or ""
    if request.api != "generate" or "GeminiCLI" not in agent:
        return None
    config = request.body.get("generationConfig") or {} if isinstance(request.body, Mapping) else {}
    schema = _schema(config)
    if schema:
        value = schema_instance(schema)
        if isinstance(value, dict) and "complexity_score" in value:
            value["complexity_score"] = 1
        return "side gemini-utility-json", Reply(structured=value)
    return "side gemini-utility", Reply(text="OK")


def render(request: LoggedRequest, reply: Reply) -> Answer:
    """A ``generateContent`` answer, or the SSE stream of ``streamGenerateContent``."""
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    if reply.structured is not None:
        parts.append({"text": json.dumps(reply.structured)})
    for call in reply.tool_calls:
        args: Any = dict(call.args) if call.input is None else {"input": call.input}
        function_call: dict[str, Any] = {"name": call.name, "args": args}
        if call.id:
            function_call["id"] = call.id
        parts.append({"functionCall": function_call})
    usage = {
        "promptTokenCount": reply.usage.input_tokens + reply.usage.cache_read_tokens,
        "candidatesTokenCount": reply.usage.output_tokens,
        "cachedContentTokenCount": reply.usage.cache_read_tokens,
        "totalTokenCount": reply.usage.input_tokens
        + reply.usage.cache_read_tokens
        + reply.usage.output_tokens,
    }
    model = request.model or _MODELS[0]
    response_id = new_id("stub")

    def response(chunk_parts: list[dict[str, Any]], final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": chunk_parts}, "index": 0}
        data: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": model,
            "responseId": response_id,
        }
        if final:
            candidate["finishReason"] = "STOP"
            data["usageMetadata"] = usage
        return data

    if not request.stream:
        return json_answer(response(parts or [{"text": ""}], final=True))
    if reply.hang:
        opening = [sse(response(parts[:1], final=False))] if reply.text else []
        return sse_answer(opening, stall=True)
    # Text first, then the function calls with the finish reason, as the real API streams.
    texts = [p for p in parts if "text" in p]
    calls = [p for p in parts if "functionCall" in p]
    if not calls:
        texts, calls = texts[:-1], texts[-1:] or [{"text": ""}]
    events = [sse(response([p], final=False)) for p in texts]
    events.append(sse(response(calls, final=True)))
    return sse_answer(events)


def error(status: int, message: str, kind: str = "") -> Answer:
    """A Google-API-shaped error body."""
    kind = kind or _STATUS_NAMES.get(status, "UNKNOWN")
    return json_answer({"error": {"code": status, "message": message, "status": kind}}, status)


def builtin(request: LoggedRequest) -> Answer | None:
    """Token counting and model listing."""
    if request.api == "count_tokens":
        return json_answer({"totalTokens": max(1, len(request.text) // 4)})
    if request.api == "models":
        name = request.model
        if name:
            return json_answer(_model(name))
        return json_answer({"models": [_model(m) for m in _MODELS]})
    return None


def _model(name: str) -> dict[str, Any]:
    return {
        "name": f"models/{name}",
        "displayName": name,
        "inputTokenLimit": 1_048_576,
        "outputTokenLimit": 65_536,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
    }


def _schema(config: Mapping[str, Any]) -> Any:
    return config.get("responseJsonSchema") or config.get("responseSchema")


def _parts(content: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    parts = content.get("parts")
    if isinstance(parts, Sequence) and not isinstance(parts, str):
        return [p for p in parts if isinstance(p, Mapping)]
    return []


def _parts_text(content: Mapping[str, Any]) -> str:
    texts: list[str] = []
    for part in _parts(content):
        if "text" in part:
            texts.append(str(part["text"]))
        elif "functionResponse" in part:
            texts.append(json.dumps(part["functionResponse"].get("response")))
        elif "functionCall" in part:
            texts.append(json.dumps(part["functionCall"]))
    return "\n".join(t for t in texts if t)
