"""How much each agent call sends to the model, from the stub server's request log.

:class:`DispatchLog` is an event sink (``Repo.run(..., sink=log)``): it sees
the engine journal ``agent.dispatched`` and ``agent.finished`` for each call
and gives that call the model requests the stub received in between. Each
:class:`Dispatch` then tells phasegate's own prompt apart from the whole
request the agent sent (its system prompt, its tool definitions, the
messages). Sizes in tokens are estimates: characters (or bytes) divided by
:data:`CHARS_PER_TOKEN`, close enough to compare requests with one another.

Calls are told apart by time, so the run must make one call at a time (no
parallel fan-out).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from phasegate.testing.request_log import LoggedRequest

#: The rough size of a token in English text and JSON (for estimates only).
CHARS_PER_TOKEN = 4
#: Events that end a call.
_ENDS = frozenset({"agent.finished", "agent.failed"})


def estimated_tokens(size: int) -> int:
    """``size`` characters or bytes as an estimated number of tokens (``size / 4``, rounded)."""
    return round(size / CHARS_PER_TOKEN)


def json_bytes(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (0 for ``None``)."""
    if value is None:
        return 0
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def request_bytes(request: LoggedRequest) -> int:
    """Bytes of a request's body as compact JSON: what the model is sent, whatever the
    client's own formatting or compression."""
    return json_bytes(request.body)


def tool_definition_bytes(request: LoggedRequest) -> int:
    """Bytes of the tool definitions a request carries (its ``tools`` field, every provider)."""
    body = request.body
    return json_bytes(body.get("tools")) if isinstance(body, Mapping) else 0


@dataclass(frozen=True)
class Dispatch:
    """One agent call: who made it, phasegate's prompt, and the model requests it caused."""

    role: str
    backend: str
    access: str
    #: Characters of the prompt phasegate wrote for the call (journaled as ``prompt_chars``).
    prompt_chars: int
    requests: tuple[LoggedRequest, ...]

    @property
    def first(self) -> LoggedRequest | None:
        """The call's first model request: the one carrying phasegate's prompt."""
        return self.requests[0] if self.requests else None

    @property
    def first_bytes(self) -> int:
        """Bytes of the first model request."""
        return request_bytes(self.first) if self.first else 0

    @property
    def total_bytes(self) -> int:
        """Bytes of all of the call's model requests (each turn resends the conversation)."""
        return sum(request_bytes(r) for r in self.requests)

    @property
    def system_chars(self) -> int:
        """Characters of the first request's system prompt."""
        return len(self.first.system) if self.first else 0

    @property
    def tool_bytes(self) -> int:
        """Bytes of the first request's tool definitions."""
        return tool_definition_bytes(self.first) if self.first else 0

    @property
    def tools(self) -> tuple[str, ...]:
        """The names of the tools the first request offers the model."""
        return self.first.tools if self.first else ()


class DispatchLog:
    """An event sink grouping the stub's model requests by the agent call that made them.

    ``requests`` returns the stub's model requests so far (usually
    ``stub.model_requests``). ``role`` is the role of the call in flight (``None``
    between calls), for a script that answers by role.
    """

    def __init__(self, requests: Callable[[], list[LoggedRequest]]) -> None:
        self._requests = requests
        self._lock = threading.Lock()
        self._open: tuple[dict[str, Any], int] | None = None
        self.dispatches: list[Dispatch] = []
        self.role: str | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        if name == "agent.dispatched":
            with self._lock:
                self._open = (event, len(self._requests()))
                self.role = str(event.get("role", ""))
        elif name in _ENDS:
            with self._lock:
                if self._open is None:
                    return
                started, start = self._open
                self._open, self.role = None, None
                self.dispatches.append(
                    Dispatch(
                        role=str(started.get("role", "")),
                        backend=str(started.get("backend", "")),
                        access=str(started.get("access", "")),
                        prompt_chars=int(started.get("prompt_chars", 0)),
                        requests=tuple(self._requests()[start:]),
                    )
                )
