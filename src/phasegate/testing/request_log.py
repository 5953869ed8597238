"""What the stub server records about each request it receives.

Every request becomes a :class:`LoggedRequest`: the raw facts (method, path,
headers with credentials redacted, parsed JSON body) plus a provider-neutral
view of the conversation (system prompt, user prompt, tools offered, whether
a tool result came back) so tests can assert what an agent was shown without
knowing each wire format.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

#: Header names whose values are credentials (compared lower-case).
SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"}
)
#: Query parameters whose values are credentials (Gemini accepts ``?key=``).
SECRET_PARAMS = frozenset({"key", "api_key"})
REDACTED = "<redacted>"


@dataclass(frozen=True)
class View:
    """The conversation a request carries, flattened to text (see :class:`LoggedRequest`)."""

    model: str | None = None
    stream: bool = False
    system: str = ""
    prompt: str = ""
    last: str = ""
    text: str = ""
    tools: tuple[str, ...] = ()
    tool_result: bool = False
    schema: bool = False


@dataclass(frozen=True)
class LoggedRequest:
    """One request the stub received, and how it was answered.

    ``provider`` is ``anthropic``, ``openai``, ``gemini`` or ``unknown``;
    ``api`` names the endpoint (``messages``, ``count_tokens``, ``responses``,
    ``chat``, ``generate``, ``stream_generate``, ``models``, ``probe``,
    ``unknown``). ``system``/``prompt``/``last``/``text`` are the system
    prompt, the user-authored text of the whole conversation, the last
    message's text and everything together. ``answered_by`` says what
    answered: ``rule <provider>[<index>]``, ``handler <provider>[<index>]``,
    ``side <what>``, ``default``, ``builtin`` or ``rejected <why>``.
    """

    seq: int
    time: float
    provider: str
    api: str
    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    model: str | None = None
    stream: bool = False
    system: str = ""
    prompt: str = ""
    last: str = ""
    text: str = ""
    tools: tuple[str, ...] = ()
    tool_result: bool = False
    schema: bool = False
    answered_by: str = ""

    @property
    def side(self) -> bool:
        """Whether this was a CLI side request answered by a built-in reply."""
        return self.answered_by.startswith("side")

    def header(self, name: str) -> str | None:
        """A header's (redacted) value, looked up case-insensitively."""
        wanted = name.lower()
        for key, value in self.headers.items():
            if key.lower() == wanted:
                return value
        return None

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict (one line of the JSONL log)."""
        data = asdict(self)
        data["tools"] = list(self.tools)
        return data


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Copy ``headers`` with credential values replaced by ``<redacted>``."""
    return {k: (REDACTED if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}


def redact_query(query: Mapping[str, str]) -> dict[str, str]:
    """Copy ``query`` with credential parameters replaced by ``<redacted>``."""
    return {k: (REDACTED if k.lower() in SECRET_PARAMS else v) for k, v in query.items()}


class RequestLog:
    """Thread-safe in-memory list of requests, optionally mirrored to a JSONL file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._lock = threading.Lock()
        self._items: list[LoggedRequest] = []
        self._seq = itertools.count(1)
        self._file: TextIO | None = None
        if path is not None:
            self._file = Path(path).open("a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def next_seq(self) -> int:
        """A fresh sequence number (in arrival order) for a new request."""
        with self._lock:
            return next(self._seq)

    def append(self, request: LoggedRequest) -> None:
        """Record ``request`` (and write it to the JSONL file, flushed)."""
        with self._lock:
            self._items.append(request)
            if self._file is not None:
                self._file.write(json.dumps(request.to_json(), ensure_ascii=False) + "\n")
                self._file.flush()

    def snapshot(self) -> list[LoggedRequest]:
        """A copy of the requests recorded so far, oldest first."""
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        """Forget the in-memory requests (the JSONL file keeps them)."""
        with self._lock:
            self._items.clear()

    def close(self) -> None:
        """Close the JSONL file, if any."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
