"""One node's state within a work item's engine state, and the spend it records.

A :class:`NodeState` is a view over the plain dict the state file holds for
one visit of one node, so it encodes as it is; its common fields are
properties, the rest item access.
"""

from __future__ import annotations

from typing import Any


def empty_usage() -> dict[str, Any]:
    """What no agent call has spent yet: calls, tokens by kind, cost."""
    return {
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cost_usd": 0.0,
    }


def add_usage(
    usage: dict[str, Any],
    input_tokens: int,
    output_tokens: int,
    cost: float | None,
    cache_read: int = 0,
    cache_write: int = 0,
) -> None:
    """Add one agent call's spend to ``usage`` (a dict of :func:`empty_usage`'s shape)."""
    usage["calls"] = int(usage.get("calls", 0)) + 1
    usage["input_tokens"] = int(usage.get("input_tokens", 0)) + input_tokens
    usage["output_tokens"] = int(usage.get("output_tokens", 0)) + output_tokens
    usage["cache_read_tokens"] = int(usage.get("cache_read_tokens", 0)) + cache_read
    usage["cache_write_tokens"] = int(usage.get("cache_write_tokens", 0)) + cache_write
    usage["cost_usd"] = round(float(usage.get("cost_usd", 0.0)) + (cost or 0.0), 6)


class NodeState:
    """The state of one visit of one node (a view over a plain dict, encoded as is)."""

    __slots__ = ("d",)

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        self.d: dict[str, Any] = data if data is not None else {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.d.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.d[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.d[key] = value

    # The fields every node kind uses; others are set through item access.
    @property
    def visit(self) -> int:
        return int(self.d.get("visit", 0))

    @property
    def stage(self) -> str:
        return str(self.d.get("stage", ""))

    @stage.setter
    def stage(self, value: str) -> None:
        self.d["stage"] = value

    @property
    def iteration(self) -> int:
        return int(self.d.get("iteration", 1))

    @iteration.setter
    def iteration(self, value: int) -> None:
        self.d["iteration"] = value

    @property
    def completed(self) -> str | None:
        return self.d.get("completed")

    @property
    def started(self) -> str | None:
        return self.d.get("started")

    @property
    def outcome(self) -> str | None:
        return self.d.get("outcome")

    def records(self, key: str) -> list[Any]:
        """The list at ``key`` (created empty on first use)."""
        found = self.d.get(key)
        if not isinstance(found, list):
            found = []
            self.d[key] = found
        return found

    def mapping(self, key: str) -> dict[str, Any]:
        """The mapping at ``key`` (created empty on first use)."""
        found = self.d.get(key)
        if not isinstance(found, dict):
            found = {}
            self.d[key] = found
        return found

    def usage(self) -> dict[str, Any]:
        found = self.d.get("usage")
        if not isinstance(found, dict):
            found = empty_usage()
            self.d["usage"] = found
        return found
