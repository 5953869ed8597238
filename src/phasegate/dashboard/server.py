"""The dashboard's web app (Starlette) and its server (uvicorn).

Read-only except answering decisions. Every read goes through
:mod:`phasegate.dashboard.data`. New journal events reach an open item page
as server-sent events, read from the journal by byte offset while a run in
another process appends to it.

Items are addressed by name (``/items/NAME``, ``/api/items/NAME/...``); every
item route takes ``?workflow=W`` too, which a name two workflows have needs,
and the pages of an item opened with it keep it in their links and forms.

Who may use it is checked by :class:`~phasegate.dashboard.guard.Guard`.
"""

from __future__ import annotations

import errno
import json
import re
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from phasegate.dashboard import data, pages
from phasegate.dashboard.events import EventEntry, EventReader
from phasegate.dashboard.guard import Guard, is_loopback
from phasegate.errors import (
    AlreadyAnsweredError,
    BadInputError,
    ExitCode,
    NotFoundError,
    PhasegateError,
)
from phasegate.redact import message_redactor

STATIC_DIR = Path(__file__).parent / "static"
#: How often an open page's event stream looks at the journal (seconds).
POLL_SECONDS = 0.25
#: How often an open page's decisions are built again when the item's files did not change.
DECISIONS_SECONDS = 5.0
#: A comment line this often keeps proxies from closing an idle stream.
KEEPALIVE_SECONDS = 15.0


def _status_of(exc: PhasegateError) -> int:
    if isinstance(exc, AlreadyAnsweredError):
        return 409
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, BadInputError):
        return 400
    return 500


def _pid(running: Any) -> int | None:
    """The pid of an item's ``running`` (``None``: no run goes on)."""
    return running.get("pid") if isinstance(running, dict) else None


def _workflow(request: Request) -> str | None:
    """The workflow ``?workflow=`` names: which item a name two workflows have means."""
    return request.query_params.get("workflow") or None


def _read_entries(reader: EventReader, events: list[dict[str, Any]]) -> list[EventEntry]:
    return [entry for entry in map(reader.read, events) if entry is not None]


def create_app(
    root: Path, token: str | None = None, stopping: Callable[[], bool] = lambda: False
) -> Starlette:
    """The dashboard of the repository at ``root``.

    ``token``: required on every request. ``stopping``: true once the server
    shuts down, so open event streams end and the shutdown does not wait on them.
    """
    repo = str(root)

    def page(html: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(html, status_code=status)

    async def items_page(request: Request) -> Response:
        items = await anyio.to_thread.run_sync(data.list_items, root)
        return page(pages.items_page(items, repo))

    def _item_parts(
        item: str, workflow: str | None
    ) -> tuple[dict[str, Any], list[EventEntry], int, Any, list[tuple[str, str]]]:
        detail = data.item_detail(root, item, workflow)
        events, offset = data.journal_events(root, item, 0, workflow)
        names = data.artifact_links(root, item, workflow)
        entries = _read_entries(EventReader(), events)
        return detail, entries, offset, data.decisions(root, item, workflow), names

    async def item_page(request: Request) -> Response:
        item, workflow = request.path_params["item"], _workflow(request)
        detail, entries, offset, decisions, names = await anyio.to_thread.run_sync(
            _item_parts, item, workflow
        )
        return page(pages.item_page(detail, entries, offset, decisions, names, repo, workflow))

    def _artifact_text(item: str, key: str, workflow: str | None) -> tuple[str, str]:
        """The shown name and redacted text of the artifact a URL's key names."""
        shown, path = data.find_artifact(root, item, key, workflow)
        return shown, message_redactor().text(path.read_text("utf-8", errors="replace"))

    async def artifact_page(request: Request) -> Response:
        item, key = request.path_params["item"], request.path_params["name"]
        workflow = _workflow(request)
        name, text = await anyio.to_thread.run_sync(_artifact_text, item, key, workflow)
        return page(pages.artifact_page(item, name, text, repo, workflow))

    def _decisions_fragment(item: str, workflow: str | None) -> str:
        names = data.artifact_links(root, item, workflow)
        return pages.decisions_html(item, data.decisions(root, item, workflow), names, workflow)

    async def item_events(request: Request) -> Response:
        item, workflow = request.path_params["item"], _workflow(request)
        start = request.headers.get("last-event-id") or request.query_params.get("offset") or "0"
        offset = _offset(start)
        # Fails here (a clean 404 or 400) rather than inside the stream.
        await anyio.to_thread.run_sync(data.journal_events, root, item, offset, workflow)
        reader = EventReader()
        primer, _ = await anyio.to_thread.run_sync(data.journal_events, root, item, 0, workflow)
        _read_entries(reader, primer)  # so finished calls name their backend
        return StreamingResponse(
            _stream(item, workflow, offset, reader),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    async def _stream(
        item: str, workflow: str | None, offset: int, reader: EventReader
    ) -> AsyncIterator[str]:
        yield "retry: 1000\n\n"
        try:
            async for message in _follow(item, workflow, offset, reader):
                yield message
        except PhasegateError as exc:  # e.g. the journal turned corrupt: say so, stop
            yield _sse("problem", {"message": str(exc)})

    async def _follow(
        item: str, workflow: str | None, offset: int, reader: EventReader
    ) -> AsyncIterator[str]:
        shown_decisions: str | None = None
        fragment: str | None = None
        decisions_mark: tuple[Any, ...] | None = None
        decisions_read = 0.0
        # The run the page's summary shows going on: once it ends (after its last event,
        # or killed), the summary is sent again, not left saying it runs.
        shown_running = _pid(await anyio.to_thread.run_sync(data.running, root, item, workflow))
        quiet_since = time.monotonic()
        while not stopping():
            events, new_offset = await anyio.to_thread.run_sync(
                data.journal_events, root, item, offset, workflow
            )
            ended = False
            if new_offset == offset and shown_running is not None:
                now = await anyio.to_thread.run_sync(data.running, root, item, workflow)
                ended = _pid(now) != shown_running
            if ended:
                detail = await anyio.to_thread.run_sync(data.item_detail, root, item, workflow)
                shown_running = _pid(detail.get("running"))
                summary = {"html": pages.summary_html(detail), "phases": pages.phases_html(detail)}
                yield _sse("summary", summary)
            if new_offset != offset:
                # Only a journal read again from its start (replaced by a shorter one, or an
                # offset past its end) ends before the offset: the page starts over.
                reset = new_offset < offset
                if reset:
                    reader = EventReader()
                offset = new_offset
                read = _read_entries(reader, events)
                html = (
                    pages.timeline_html(item, read, workflow) if reset else pages.entries_html(read)
                )
                payload = {"html": html, "count": len(events), "reset": reset}
                yield _sse("entries", payload, offset)
                detail = await anyio.to_thread.run_sync(data.item_detail, root, item, workflow)
                shown_running = _pid(detail.get("running"))
                summary = {"html": pages.summary_html(detail), "phases": pages.phases_html(detail)}
                yield _sse("summary", summary)
                quiet_since = time.monotonic()
            # The decisions are built again only when the item's files changed (building them
            # loads the item: far too much for every poll of every open page), and now and
            # then whatever happened.
            mark = await anyio.to_thread.run_sync(data.state_mark, root, item, workflow)
            due = time.monotonic() - decisions_read > DECISIONS_SECONDS
            if mark != decisions_mark or due:
                decisions_mark, decisions_read = mark, time.monotonic()
                fragment = await anyio.to_thread.run_sync(_decisions_fragment, item, workflow)
            if fragment is not None and fragment != shown_decisions:
                shown_decisions = fragment
                version = pages.fragment_version(fragment)
                yield _sse("decisions", {"html": fragment, "version": version})
            if time.monotonic() - quiet_since > KEEPALIVE_SECONDS:
                yield ": keepalive\n\n"
                quiet_since = time.monotonic()
            await anyio.sleep(POLL_SECONDS)

    async def answer_form(request: Request) -> Response:
        item, decision_id = request.path_params["item"], request.path_params["decision_id"]
        workflow = _workflow(request)
        form = await request.form()
        wants_json = "application/json" in request.headers.get("accept", "")
        try:
            choice = _form_text(form.get("choice"), "choice") or ""
            note = _form_text(form.get("note"), "note") or None
            # The question the page showed: an answer sent again later does not answer the next.
            visit = _visit(form.get("visit"), "the form's field visit")
            decision = await anyio.to_thread.run_sync(
                data.answer, root, item, decision_id, choice, note, "dashboard", workflow, visit
            )
        except PhasegateError as exc:
            if wants_json:
                return _json_error(exc)
            back = pages.item_url(item, workflow=workflow) + "#decisions"
            return page(pages.error_page(_status_of(exc), str(exc), repo, back), _status_of(exc))
        if wants_json:
            fragment = await anyio.to_thread.run_sync(_decisions_fragment, item, workflow)
            version = pages.fragment_version(fragment)
            return JSONResponse({"decision": decision, "html": fragment, "version": version})
        back = pages.item_url(item, workflow=workflow) + "#decisions"
        return RedirectResponse(back, status_code=303)

    async def api_items(request: Request) -> Response:
        return JSONResponse(await anyio.to_thread.run_sync(data.list_items, root))

    async def api_item(request: Request) -> Response:
        item, workflow = request.path_params["item"], _workflow(request)
        return JSONResponse(await anyio.to_thread.run_sync(data.item_detail, root, item, workflow))

    async def api_events(request: Request) -> Response:
        item, workflow = request.path_params["item"], _workflow(request)
        asked = _offset(request.query_params.get("offset", "0"))
        events, offset = await anyio.to_thread.run_sync(
            data.journal_events, root, item, asked, workflow
        )
        if offset < asked:
            # data.py read the journal from its start: right for a follower that can start
            # over (the event stream tells the page to), but a client of this API keeping
            # its own offset would take the events it has for new ones.
            raise BadInputError(
                f"offset {asked} is past the end of the journal of {item!r} (its events end "
                f"at byte {offset}): the journal was replaced, or the offset is not one a "
                "read returned; read it again from offset 0"
            )
        return JSONResponse({"events": events, "offset": offset})

    async def api_artifacts(request: Request) -> Response:
        item, workflow = request.path_params["item"], _workflow(request)
        found = await anyio.to_thread.run_sync(data.artifact_links, root, item, workflow)
        return JSONResponse(
            [
                {"name": n, "url": pages.item_url(item, "artifacts", key, workflow=workflow)}
                for n, key in found
            ]
        )

    async def api_artifact(request: Request) -> Response:
        item, key = request.path_params["item"], request.path_params["name"]
        name, text = await anyio.to_thread.run_sync(_artifact_text, item, key, _workflow(request))
        return JSONResponse({"name": name, "markdown": text, "html": pages.render_markdown(text)})

    async def api_decisions(request: Request) -> Response:
        item, workflow = request.path_params["item"], _workflow(request)
        return JSONResponse(await anyio.to_thread.run_sync(data.decisions, root, item, workflow))

    async def api_answer(request: Request) -> Response:
        item, decision_id = request.path_params["item"], request.path_params["decision_id"]
        workflow = _workflow(request)
        try:
            body = await request.json()
        except ValueError:  # not JSON, or not UTF-8 text
            body = None
        if not isinstance(body, dict):
            raise BadInputError(
                'the body must be a JSON object {"choice": ..., "note": ..., "visit": ...}'
            )
        # No choice at all: data.answer says it is missing, naming the decision's choices.
        choice = body.get("choice")
        choice = "" if choice is None else choice
        kind = {bool: "true or false", dict: "an object", list: "an array"}
        if not isinstance(choice, str):
            raise BadInputError(
                f'the body\'s "choice" must be text (a JSON string), not '
                f"{kind.get(type(choice), 'a number')}: nothing was recorded"
            )
        note = body.get("note")
        if note is not None and not isinstance(note, str):
            raise BadInputError(
                f'the body\'s "note" must be text (a JSON string) or null, not '
                f"{kind.get(type(note), 'a number')}: nothing was recorded"
            )
        note = note or None
        visit = _visit(body.get("visit"), 'the body\'s "visit"')
        decision = await anyio.to_thread.run_sync(
            data.answer, root, item, decision_id, choice, note, "dashboard", workflow, visit
        )
        return JSONResponse(decision)

    async def on_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PhasegateError)
        if request.url.path.startswith("/api/"):
            return _json_error(exc)
        return page(pages.error_page(_status_of(exc), str(exc), repo), _status_of(exc))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        """No such address, or a method it does not take: JSON under /api/, as every API
        error is; text elsewhere."""
        assert isinstance(exc, HTTPException)
        path, method = request.url.path, request.method
        if path != "/api" and not path.startswith("/api/"):
            return PlainTextResponse(exc.detail, exc.status_code, headers=exc.headers)
        if exc.status_code == 404:
            message = f"phasegate: no such API address: {method} {path}"
        elif exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "GET")
            message = f"phasegate: {path} does not take {method} (it takes {allowed})"
        else:
            message = f"phasegate: {method} {path}: {exc.detail}"
        body = {"error": message, "exit_code": int(ExitCode.BAD_INPUT)}
        return JSONResponse(body, exc.status_code, headers=exc.headers)

    routes = [
        Route("/", items_page),
        Route("/items/{item}", item_page),
        Route("/items/{item}/artifacts/{name:path}", artifact_page),
        Route("/items/{item}/events", item_events),
        Route("/items/{item}/decisions/{decision_id}", answer_form, methods=["POST"]),
        Route("/api/items", api_items),
        Route("/api/items/{item}", api_item),
        Route("/api/items/{item}/events", api_events),
        Route("/api/items/{item}/artifacts", api_artifacts),
        Route("/api/items/{item}/artifacts/{name:path}", api_artifact),
        Route("/api/items/{item}/decisions", api_decisions),
        Route("/api/items/{item}/decisions/{decision_id}", api_answer, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    handlers = {PhasegateError: on_error, HTTPException: on_http_error}
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.add_middleware(Guard, token=token)
    return app


def _form_text(raw: object, field: str) -> str | None:
    """The text of a form's field (``None``: the form has none); a file sent in it is refused."""
    if raw is None or isinstance(raw, str):
        return raw
    raise BadInputError(f"the form's field {field} must be text, not a file: nothing was recorded")


def _visit(raw: object, where: str) -> int | None:
    """The question an answer names (a decision's ``visit``), ``None`` when it names none."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    if isinstance(raw, str) and re.fullmatch(r"[0-9]+", raw.strip()):
        return int(raw)
    raise BadInputError(
        f"{where} must be the visit of the question answered (a whole number, as "
        f"/api/items/ITEM/decisions lists it), not {raw!r}"
    )


def _offset(raw: str) -> int:
    """The byte offset ``raw`` names (``?offset=`` or ``Last-Event-ID``)."""
    if not re.fullmatch(r"-?[0-9]+", raw):
        raise BadInputError(
            f"offset {raw!r} is not a number: give 0, or an offset an earlier read returned"
        )
    offset = int(raw)
    if offset < 0:
        raise BadInputError(
            f"offset {raw!r} must be 0 or more: give 0, or an offset an earlier read returned"
        )
    return offset


def _json_error(exc: PhasegateError) -> JSONResponse:
    return JSONResponse(
        {"error": str(exc), "exit_code": int(exc.exit_code)}, status_code=_status_of(exc)
    )


def _sse(event: str, payload: dict[str, Any], event_id: int | None = None) -> str:
    lines = [f"event: {event}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append("data: " + json.dumps(payload, ensure_ascii=False))
    return "\n".join(lines) + "\n\n"


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        advice = (
            " (another program, or a dashboard already started, listens there): pick "
            "another with --port P (--port 0: any free port)"
            if exc.errno == errno.EADDRINUSE
            else ""
        )
        raise BadInputError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}{advice}"
        ) from None
    sock.set_inheritable(True)
    return sock


def serve(
    root: Path,
    host: str,
    port: int,
    *,
    allow_remote: bool,
    announce: Callable[[str], None],
) -> None:
    """Serve the dashboard of ``root`` until interrupted; ``announce`` gets its address."""
    import uvicorn

    loopback = is_loopback(host)
    if not loopback and not allow_remote:
        raise BadInputError(
            f"--host {host} is not a loopback address: the dashboard would be reachable from "
            "other machines; pass --allow-remote to do that (a token is then required)"
        )
    token = None if loopback else secrets.token_urlsafe(24)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host.strip("[]") else host
    announce(f"http://{shown}:{bound}/" + (f"?token={token}" if token else ""))
    server: uvicorn.Server | None = None
    app = create_app(root, token, stopping=lambda: server is not None and server.should_exit)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
