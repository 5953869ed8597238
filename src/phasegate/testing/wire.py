"""Pieces shared by the provider wire formats: answers, SSE framing, text flattening."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Answer:
    """An HTTP answer the server writes.

    A plain answer is sent with a Content-Length; a ``stream`` answer (SSE) is
    sent chunk by chunk with chunked transfer encoding. ``stall`` holds the
    connection open after the chunks (a hanging model); with ``respond``
    False not even the status line is sent.
    """

    status: int = 200
    content_type: str = "application/json"
    chunks: Sequence[bytes] = ()
    stream: bool = False
    stall: bool = False
    respond: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)


STALL = Answer(respond=False, stall=True)


def json_answer(value: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Answer:
    """A JSON body answer."""
    body = json.dumps(value).encode("utf-8")
    return Answer(status=status, chunks=(body,), headers=dict(headers or {}))


def sse_answer(events: Sequence[bytes], stall: bool = False) -> Answer:
    """A ``text/event-stream`` answer made of pre-framed events."""
    return Answer(content_type="text/event-stream", chunks=tuple(events), stream=True, stall=stall)


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE event (``event:`` line only when given), JSON data unless already a str."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def new_id(prefix: str) -> str:
    """A unique, provider-looking id such as ``msg_stub_3f2a...``."""
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def flatten(value: Any) -> str:
    """Every human-readable string inside ``value`` (content blocks, parts...), joined.

    Wire formats nest text in lists of blocks with ``text``/``content``/
    ``output`` fields; this walks them all so substring matching works
    without knowing the exact shape.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        keys = ("text", "content", "output", "input", "result", "response", "parts", "args")
        return "\n".join(s for s in (flatten(value.get(k)) for k in keys if k in value) if s)
    if isinstance(value, Sequence):
        return "\n".join(s for s in (flatten(item) for item in value) if s)
    return str(value)


def schema_instance(schema: Any) -> Any:
    """The simplest value that satisfies a JSON (or Gemini OpenAPI-style) schema.

    Used to answer a CLI's internal structured side requests harmlessly:
    first enum value, zero or the minimum for numbers, ``false``, empty
    arrays, and objects with their required properties filled in.
    """
    if not isinstance(schema, Mapping):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return schema_instance(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = str(kind or "object").lower()
    if kind == "object":
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {name: schema_instance(props.get(name, {})) for name in required}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        minimum = schema.get("minimum", 0)
        return int(minimum) if kind == "integer" else minimum
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "stub"
