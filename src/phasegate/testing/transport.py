"""HTTP plumbing for the stub server: which provider a path belongs to, and request bodies."""

from __future__ import annotations

import re
import zlib
from email.message import Message
from io import BufferedIOBase

_GEMINI_METHODS = {
    "generateContent": "generate",
    "streamGenerateContent": "stream_generate",
    "countTokens": "count_tokens",
}
# Suffix patterns, so a base URL with a path prefix (http://host/proxy/v1) still routes.
_ROUTES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"/v1/messages/count_tokens$"), "anthropic", "count_tokens"),
    (re.compile(r"/v1/messages$"), "anthropic", "messages"),
    (re.compile(r"/api/hello$"), "anthropic", "probe"),
    (re.compile(r"/v1/responses$"), "openai", "responses"),
    (re.compile(r"/v1/chat/completions$"), "openai", "chat"),
    (re.compile(r"/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>\w+)$"), "gemini", ""),
    (re.compile(r"/v1(?:beta|alpha)/models(?:/(?P<model>[^/:]+))?$"), "gemini", "models"),
    (re.compile(r"/v1/models(?:/(?P<model>[^/:]+))?$"), "", "models"),
)


class BodyTooLarge(Exception):
    """The request body is over the server's limit."""


def route(path: str, headers: dict[str, str]) -> tuple[str, str, str | None]:
    """``(provider, api, model in the path)`` for ``path``; empty strings when unknown."""
    for pattern, provider, api in _ROUTES:
        found = pattern.search(path)
        if not found:
            continue
        groups = found.groupdict()
        if provider == "gemini" and not api:
            api = _GEMINI_METHODS.get(groups.get("method") or "", "unknown")
        if not provider:
            lower = {k.lower() for k in headers}
            provider = "anthropic" if "anthropic-version" in lower else "openai"
        return provider, api, groups.get("model")
    return "", "", None


def read_body(rfile: BufferedIOBase, headers: Message, limit: int) -> bytes:
    """The request body (de-chunked, gunzipped), refusing more than ``limit`` bytes."""
    if "chunked" in headers.get("Transfer-Encoding", "").lower():
        raw = _read_chunked(rfile, limit)
    else:
        length = int(headers.get("Content-Length") or 0)
        if length > limit:
            raise BodyTooLarge
        raw = rfile.read(length) if length else b""
    encoding = headers.get("Content-Encoding", "identity").lower()
    if encoding in ("gzip", "deflate"):
        inflater = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header
        raw = inflater.decompress(raw, limit + 1)
        if len(raw) > limit:
            raise BodyTooLarge
    elif encoding not in ("identity", ""):
        raise ValueError(f"unsupported Content-Encoding {encoding!r}")
    return raw


def _read_chunked(rfile: BufferedIOBase, limit: int) -> bytes:
    out = bytearray()
    while True:
        size = int(rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return bytes(out)
        if len(out) + size > limit:
            raise BodyTooLarge
        out += rfile.read(size)
        rfile.readline(1024)
