"""The stub LLM server: real provider wire formats on 127.0.0.1, answers from a script.

Point a real agent CLI at :attr:`StubLLMServer.url` (see ``docs/stub-server.md``
for each CLI's settings) and it runs headless without reaching any provider.
Every request is recorded (:attr:`StubLLMServer.requests`) for assertions.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import sys
import threading
import time
import traceback
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from phasegate.testing import anthropic, gemini, openai
from phasegate.testing.request_log import (
    LoggedRequest,
    RequestLog,
    View,
    redact_headers,
    redact_query,
)
from phasegate.testing.script import PROVIDERS, Reply, Rule, Script
from phasegate.testing.transport import BodyTooLarge, read_body, route
from phasegate.testing.wire import STALL, Answer, json_answer

#: Request bodies above this many bytes are refused with HTTP 413.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024

_WIRES: dict[str, ModuleType] = {"anthropic": anthropic, "openai": openai, "gemini": gemini}
_GENERATION_APIS = frozenset({"messages", "responses", "chat", "generate", "stream_generate"})
_DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


class StubLLMServer:
    """A scripted LLM server speaking the Anthropic, OpenAI and Gemini wire formats.

    Use as a context manager (``with StubLLMServer(script) as stub:``) or call
    :meth:`start` / :meth:`stop`. It listens on ``host:port`` (port 0: the OS
    picks one) and serves each connection on its own daemon thread.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | Path | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.script = script if script is not None else Script()
        self.max_body_bytes = max_body_bytes
        self._log = RequestLog(log_path)
        self._lock = threading.Lock()
        self._left: dict[str, list[int | None]] = {
            p: [e.times if isinstance(e, Rule) else None for e in self.script.queue(p)]
            for p in PROVIDERS
        }
        self._stopping = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.stub = self
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The address the server listens on."""
        return str(self._httpd.server_address[0])

    @property
    def port(self) -> int:
        """The port the server listens on (the OS-chosen one when 0 was asked)."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL such as ``http://127.0.0.1:43210`` (for Anthropic and Gemini clients)."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI clients, which expect the ``/v1`` suffix."""
        return f"{self.url}/v1"

    def start(self) -> StubLLMServer:
        """Serve in a background daemon thread; returns self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self.serve_forever, name=f"stub-llm-{self.port}", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release hanging requests and close the log."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()
        self._log.close()

    def serve_forever(self) -> None:
        """Serve on the calling thread until :meth:`stop` is called from another."""
        # A short poll interval keeps stop() (and so each test's teardown) fast.
        self._httpd.serve_forever(poll_interval=0.05)

    def __enter__(self) -> StubLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what tests look at ------------------------------------------------------------

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request received so far, oldest first (a copy)."""
        return self._log.snapshot()

    def requests_for(
        self, provider: str | None = None, *, api: str | None = None, include_side: bool = False
    ) -> list[LoggedRequest]:
        """Requests for ``provider`` (and ``api``), leaving out side requests unless asked."""
        return [
            r
            for r in self._log.snapshot()
            if (provider is None or r.provider == provider)
            and (api is None or r.api == api)
            and (include_side or not r.side)
        ]

    def model_requests(self, provider: str | None = None) -> list[LoggedRequest]:
        """Generation requests (messages/responses/chat/generate) that were not side requests."""
        return [r for r in self.requests_for(provider) if r.api in _GENERATION_APIS]

    def unused_rules(self) -> list[tuple[str, int, Rule]]:
        """Rules with answers left, as ``(provider, index, rule)`` (unlimited ones excluded)."""
        with self._lock:
            return [
                (p, i, entry)
                for p in PROVIDERS
                for i, entry in enumerate(self.script.queue(p))
                if isinstance(entry, Rule) and self._left[p][i]
            ]

    def clear_requests(self) -> None:
        """Forget the requests recorded so far (the JSONL log keeps them)."""
        self._log.clear()

    # -- serving -------------------------------------------------------------------------

    def _serve(self, handler: _Handler) -> None:
        try:
            self._respond(handler)
        except _DISCONNECTS:
            handler.close_connection = True
        except Exception:  # a stub bug must not take the server down
            traceback.print_exc(file=sys.stderr)
            handler.close_connection = True
            with contextlib.suppress(OSError, ValueError):
                self._write(handler, json_answer({"error": {"message": "stub bug"}}, 500))

    def _respond(self, handler: _Handler) -> None:
        split = urlsplit(handler.path)
        path = unquote(split.path)
        query = dict(parse_qsl(split.query))
        headers = dict(handler.headers.items())
        provider, api, path_model = route(path, headers)
        wire = _WIRES.get(provider)
        base = LoggedRequest(
            seq=self._log.next_seq(),
            time=time.time(),
            provider=provider or "unknown",
            api=api or "unknown",
            method=handler.command,
            path=path,
            query=redact_query(query),
            headers=redact_headers(headers),
            model=path_model,
        )
        try:
            raw = read_body(handler.rfile, handler.headers, self.max_body_bytes)
            body = json.loads(raw) if raw.strip() else None
        except BodyTooLarge:
            handler.close_connection = True  # the unread body makes the connection unusable
            limit = f"request body exceeds the stub's {self.max_body_bytes} byte limit"
            self._finish(handler, base, _error(wire, 413, limit), "rejected too-large")
            return
        except (ValueError, UnicodeDecodeError) as exc:
            self._finish(handler, base, _error(wire, 400, f"invalid body: {exc}"), "rejected")
            return
        view = wire.view(api, body) if wire and api in _GENERATION_APIS else View()
        request = replace(base, body=body, **_view_fields(view, path_model))
        if wire is None:
            answer = json_answer({"error": {"message": f"stub: no route for {path}"}}, 404)
            self._finish(handler, request, answer, "builtin 404")
        elif api == "probe":
            self._finish(handler, request, Answer(chunks=(b"",)), "builtin")
        elif api not in _GENERATION_APIS:
            answer = wire.builtin(request) or wire.error(404, f"stub: unsupported {path}")
            self._finish(handler, request, answer, "builtin")
        else:
            reply, answered_by = self._choose(request, wire)
            if reply.delay and self._stopping.wait(reply.delay):
                return
            if reply.error is not None:
                error = reply.error
                answer = wire.error(error.status, error.message, error.type)
                if error.retry_after is not None:
                    headers = {**answer.headers, "Retry-After": error.retry_after}
                    answer = replace(answer, headers=headers)
            elif reply.hang and not request.stream:
                answer = STALL
            else:
                answer = wire.render(request, reply)
            self._finish(handler, request, answer, answered_by)

    def _choose(self, request: LoggedRequest, wire: ModuleType) -> tuple[Reply, str]:
        if self.script.side_requests:
            side: tuple[str, Reply] | None = wire.side_reply(request)
            if side is not None:
                return side[1], side[0]
        provider = request.provider
        # One lock for matching and spending, so concurrent requests never share a rule.
        with self._lock:
            for index, entry in enumerate(self.script.queue(provider)):
                if isinstance(entry, Rule):
                    left = self._left[provider][index]
                    if left == 0 or not entry.match.accepts(request):
                        continue
                    if left is not None:
                        self._left[provider][index] = left - 1
                    return entry.reply, f"rule {provider}[{index}]"
                reply = entry(request)
                if reply is not None:
                    return reply, f"handler {provider}[{index}]"
        return self.script.default, "default"

    def _finish(
        self, handler: _Handler, request: LoggedRequest, answer: Answer, answered_by: str
    ) -> None:
        self._log.append(replace(request, answered_by=answered_by))
        self._write(handler, answer)

    def _write(self, handler: _Handler, answer: Answer) -> None:
        if answer.respond:
            handler.send_response(answer.status)
            handler.send_header("Content-Type", answer.content_type)
            for name, value in answer.headers.items():
                handler.send_header(name, value)
            if answer.stream:
                handler.send_header("Transfer-Encoding", "chunked")
                handler.send_header("Cache-Control", "no-cache")
                handler.end_headers()
                for chunk in answer.chunks:
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    handler.wfile.flush()
                if not answer.stall:
                    handler.wfile.write(b"0\r\n\r\n")
            else:
                payload = b"".join(answer.chunks)
                handler.send_header("Content-Length", str(len(payload)))
                handler.end_headers()
                if handler.command != "HEAD":
                    handler.wfile.write(payload)
            handler.wfile.flush()
        if answer.stall:
            handler.close_connection = True
            self._hold(handler.connection)

    def _hold(self, conn: socket.socket) -> None:
        """Keep a stalled request open until the client leaves or the server stops."""
        while not self._stopping.wait(0.2):
            readable, _, _ = select.select([conn], [], [], 0)
            if readable:
                try:
                    if not conn.recv(1, socket.MSG_PEEK):
                        return  # the client closed its end
                except OSError:
                    return


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    stub: StubLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client vanishing mid-request is routine for a stub; anything else is a bug.
        if not isinstance(sys.exc_info()[1], _DISCONNECTS):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def do_POST(self) -> None:
        self.server.stub._serve(self)

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the request log records everything; stderr stays quiet


def _view_fields(view: View, path_model: str | None) -> dict[str, Any]:
    fields = {name: getattr(view, name) for name in View.__dataclass_fields__}
    fields["model"] = view.model or path_model
    return fields


def _error(wire: ModuleType | None, status: int, message: str) -> Answer:
    if wire is None:
        return json_answer({"error": {"message": message}}, status)
    answer: Answer = wire.error(status, message)
    return answer
