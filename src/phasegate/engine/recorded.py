"""What the journal says was already done: agent results and check outcomes by call key.

The state file may lag the journal (a run killed between the two, or state
commits coalesced behind the fsync'd journal), so before making an agent call
or running a phase's checks the engine looks here: a result recorded for the
very same call (same role, phase, epoch, iteration and stage) is reused, never
made again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

CallKey = tuple[Any, ...]


def call_key(
    role: str | None, phase: str, epoch: int | None, iteration: int, stage: str | None
) -> CallKey:
    """The key identifying one logical agent call (or, with ``role=None``, a check round)."""
    return (role, phase, epoch, iteration, stage)


def _event_key(event: Mapping[str, Any]) -> CallKey:
    return call_key(
        event.get("role"),
        str(event.get("phase")),
        event.get("epoch"),
        int(event.get("iteration") or 0),
        event.get("stage"),
    )


class RecordedCalls:
    """An index of one journal's agent calls and check rounds, built in one pass."""

    def __init__(self, events: Iterable[Mapping[str, Any]]) -> None:
        self._dispatched: dict[str, CallKey] = {}
        self._attempts: dict[CallKey, list[str]] = {}
        self._finished_ok: dict[CallKey, Mapping[str, Any]] = {}
        self._finished: set[str] = set()
        self._checks: dict[CallKey, list[Mapping[str, Any]]] = {}
        for event in events:
            self._add(event)

    def _add(self, event: Mapping[str, Any]) -> None:
        name = event.get("event")
        if name == "agent.dispatched":
            key = _event_key(event)
            attempt = str(event.get("attempt"))
            self._dispatched[attempt] = key
            self._attempts.setdefault(key, []).append(attempt)
        elif name == "agent.finished":
            attempt = str(event.get("attempt"))
            self._finished.add(attempt)
            dispatched = self._dispatched.get(attempt)
            if dispatched is not None and event.get("ok"):
                self._finished_ok.setdefault(dispatched, event)
        elif name == "checks.completed":
            key = call_key(
                None,
                str(event.get("phase")),
                event.get("epoch"),
                int(event.get("iteration") or 0),
                "checks",
            )
            self._checks[key] = list(event.get("outcomes") or [])

    def result(self, key: CallKey) -> Mapping[str, Any] | None:
        """The ``agent.finished`` event of a successful call with ``key``, if recorded."""
        return self._finished_ok.get(key)

    def abandoned(self, key: CallKey) -> str | None:
        """The last attempt of ``key`` dispatched but never finished (a run died in it)."""
        attempts = self._attempts.get(key, [])
        if attempts and attempts[-1] not in self._finished:
            return attempts[-1]
        return None

    def checks(self, phase: str, epoch: int, iteration: int) -> list[Mapping[str, Any]] | None:
        """The outcomes of a whole check round recorded by ``checks.completed``, if any."""
        return self._checks.get(call_key(None, phase, epoch, iteration, "checks"))
