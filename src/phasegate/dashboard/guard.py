"""Who may use the dashboard: loopback by default, a token otherwise; no other site's forms.

Loopback only unless the server was started with ``--allow-remote``: then
every request must carry the token printed at start (``?token=`` once, a
cookie after that, or an ``Authorization: Bearer`` header). On loopback the
``Host`` header must name a loopback address (no DNS rebinding). A POST from
a page of another origin is refused either way, and every response carries
headers that keep the pages from loading anything from elsewhere. A refusal
under ``/api/`` (or of a request that asks for JSON, as the page's script does)
is JSON shaped like every other API error, ``{"error": ..., "exit_code": 2}``;
elsewhere it is plain text.
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
        if refusal is not None:
            await _refusal_response(scope, headers, *refusal)(scope, receive, send)
            return
        set_cookie = self.token is not None and self._query_token(scope) == self.token

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = list(_SECURITY_HEADERS)
                if set_cookie:
                    cookie = f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                    extra.append((b"set-cookie", cookie.encode("latin-1")))
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await self.app(scope, receive, send_with_headers)

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
        return any(secrets.compare_digest(o, self.token) for o in offered)
