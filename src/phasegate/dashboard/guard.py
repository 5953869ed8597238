"""Who may use the dashboard: loopback by default, a token otherwise; no other site's forms.

Loopback only unless the server was started with ``--allow-remote``: then
every request must carry the token printed at start (``?token=`` once, a
cookie after that, or an ``Authorization: Bearer`` header). On loopback the
``Host`` header must name a loopback address (no DNS rebinding). A POST from
a page of another origin is refused either way, and every response carries
headers that keep the pages from loading anything from elsewhere. A refusal
under ``/api/`` (or of a request that asks for JSON, as the page's script does)
is JSON shaped like every other API error, ``{"error": ..., "exit_code": 2}``;
elsewhere it is plain text. A request body larger than :data:`MAX_BODY_BYTES` is
refused (413) before any route reads it, whether or not it says its length.
"""

from __future__ import annotations

import ipaddress
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from phasegate.errors import ExitCode

TOKEN_COOKIE = "phasegate_token"
#: The largest request body the dashboard takes (an answer and its note are far smaller).
MAX_BODY_BYTES = 1024 * 1024
#: A body over the limit is still read (and dropped) up to this size, so that a client
#: sending it whole before reading gets the refusal; past it the connection is closed.
_DRAIN_BYTES = 64 * MAX_BODY_BYTES
_TOO_LARGE = (
    413,
    f"phasegate: request body too large: this dashboard takes at most 1 MiB "
    f"({MAX_BODY_BYTES} bytes)",
)
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        b"form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback."""
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8765`` -> ``::1``)."""
    if header.startswith("["):
        return header[1 : header.find("]")]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _refusal_response(scope: Scope, headers: dict[str, str], status: int, message: str) -> Response:
    """The refusal as API clients (and the page's script) read errors, or as text."""
    path = str(scope.get("path", ""))
    if path.startswith("/api/") or "application/json" in headers.get("accept", ""):
        body = {"error": message, "exit_code": int(ExitCode.BAD_INPUT)}
        return JSONResponse(body, status_code=status)
    return PlainTextResponse(message, status_code=status)


class Guard:
    """Checks every request (token, host, origin) and adds the security headers."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        refusal = self._refusal(scope, headers, host)
        if refusal is None and scope["method"] not in ("GET", "HEAD"):
            receive, too_large = await _within_limit(headers, receive)
            refusal = _TOO_LARGE if too_large else None
        if refusal is not None:
            refused = _refusal_response(scope, headers, *refusal)
            await refused(scope, receive, _with_headers(send, list(_SECURITY_HEADERS)))
            return
        extra = list(_SECURITY_HEADERS)
        query = self._query_token(scope)
        if self.token is not None and query is not None and _same_token(query, self.token):
            cookie = f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
            extra.append((b"set-cookie", cookie.encode("latin-1")))
        await self.app(scope, receive, _with_headers(send, extra))

    def _refusal(self, scope: Scope, headers: dict[str, str], host: str) -> tuple[int, str] | None:
        if self.token is None and not is_loopback(_host_name(host)):
            return 403, "phasegate: this dashboard answers on its loopback address only"
        if self.token is not None and not self._authorised(scope, headers):
            return 401, (
                "phasegate: this dashboard needs its token: open the address that "
                "'phasegate serve' printed"
            )
        origin = headers.get("origin")
        if scope["method"] not in ("GET", "HEAD") and origin is not None:
            scheme = scope.get("scheme", "http")
            if origin != f"{scheme}://{host}":
                return 403, "phasegate: refused a request from another site"
        return None

    @staticmethod
    def _query_token(scope: Scope) -> str | None:
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        return values[0] if values else None

    def _authorised(self, scope: Scope, headers: dict[str, str]) -> bool:
        assert self.token is not None
        offered: list[str] = []
        query = self._query_token(scope)
        if query:
            offered.append(query)
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            offered.append(auth[7:].strip())
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is simply no token
            cookies = SimpleCookie()
        if TOKEN_COOKIE in cookies:
            offered.append(cookies[TOKEN_COOKIE].value)
        return any(_same_token(o, self.token) for o in offered)


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    """``send``, adding ``extra`` to the response's headers."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = list(message.get("headers", [])) + extra
        await send(message)

    return sending


async def _within_limit(headers: dict[str, str], receive: Receive) -> tuple[Receive, bool]:
    """The request's body read ahead (at most :data:`MAX_BODY_BYTES`) and a ``receive``
    that hands it on, or whether it is larger than that."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        if int(declared) <= _DRAIN_BYTES:
            await _drain(receive, 0)
        return receive, True
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break  # the client went away: the app hears it
        size += len(message.get("body", b""))
        if size > MAX_BODY_BYTES:
            if message.get("more_body", False):
                await _drain(receive, size)
            return receive, True
        if not message.get("more_body", False):
            break
    pending = iter(messages)

    async def replay() -> Message:
        return next(pending, None) or await receive()

    return replay, False


async def _drain(receive: Receive, size: int) -> None:
    """Read the rest of a body that is refused (up to :data:`_DRAIN_BYTES` in all), so a
    client that sends it whole before it reads the answer gets the refusal."""
    while size <= _DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        size += len(message.get("body", b""))


def _same_token(offered: str, token: str) -> bool:
    """Whether ``offered`` is ``token``, compared in constant time as UTF-8 bytes (a token
    offered with characters beyond ASCII is simply a wrong one)."""
    encoded = offered.encode("utf-8", errors="surrogatepass")
    return secrets.compare_digest(encoded, token.encode("utf-8"))
