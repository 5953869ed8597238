"""What the journal says was done since the last state commit: results by call key.

The state file may lag the journal (a run killed between the two, or state
commits coalesced behind the fsync'd journal), so before an agent call, a
check round or an action the engine looks here: a result recorded for the very
same key (node path, visit, iteration, stage, try) is reused, never made again.
Only the journal's tail after the state's recorded offset is read, so resuming
costs the same however long the journal is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Events the engine reads back, and the fields each must carry with their types.
_REQUIRED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "agent.dispatched": {"key": str, "attempt": str},
    "agent.finished": {"key": str, "attempt": str, "ok": bool},
    "checks.completed": {"key": str, "outcomes": list},
    "action.done": {"key": str, "outcome": str},
    "decision.answered": {"id": str, "visit": int, "choice": str},
}
#: Events read back only when they carry a key (older journals' do not).
_KEYED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "foreach.items": {"key": str, "items": list, "entries": dict},
    "check.finished": {"key": str, "index": int},
}


def event_problem(event: Mapping[str, Any]) -> str | None:
    """Why ``event`` cannot be used (a field missing or of the wrong type), if it cannot."""
    fields = _REQUIRED.get(str(event.get("event")))
    if fields is None and "key" in event:
        fields = _KEYED.get(str(event.get("event")))
    if fields is None:
        return None
    for name, expected in fields.items():
        if name not in event:
            return f"field {name!r} is missing"
        if not isinstance(event[name], expected):
            return f"field {name!r} has the wrong type ({type(event[name]).__name__})"
    if event.get("event") == "agent.finished":
        return _result_problem(event)
    if event.get("event") == "checks.completed":
        return _outcomes_problem(event["outcomes"])
    if event.get("event") == "check.finished":
        return _numbers_problem(event, {"duration_s": _NUMBER}, "")
    if event.get("event") == "foreach.items":
        return _items_problem(event["items"], event["entries"])
    return None


def _items_problem(items: list[Any], entries: dict[str, Any]) -> str | None:
    """Why a foreach's recorded items cannot be read back: each is a name with an entry."""
    for index, name in enumerate(items):
        if not isinstance(name, str):
            return f"field 'items[{index}]' has the wrong type ({type(name).__name__})"
        if name not in entries:
            return f"field 'items[{index}]' ({name!r}) has no entry in field 'entries'"
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            return f"field 'entries.{name}' has the wrong type ({type(entry).__name__})"
    return None


_NUMBER = (int, float)
#: The fields of a check's outcome in a ``checks.completed`` event (``CheckOutcome``'s), with
#: their types (``None`` allowed: the field may be ``null``); ``name`` and ``passed`` are
#: required.
_OUTCOME: dict[str, tuple[type | tuple[type, ...], bool]] = {
    "name": (str, False),
    "command": (str, True),
    "passed": (bool, False),
    "skipped": (bool, False),
    "exit_code": (int, True),
    "output_tail": (str, False),
    "timed_out": (bool, False),
    "duration_s": (_NUMBER, False),
    "error": (str, False),
    "timeout_s": (_NUMBER, True),
}


def _outcomes_problem(outcomes: list[Any]) -> str | None:
    """Why a recorded round's outcomes cannot be read back, if they cannot."""
    for index, outcome in enumerate(outcomes):
        where = f"outcomes[{index}]"
        if not isinstance(outcome, dict):
            return f"field {where!r} has the wrong type ({type(outcome).__name__})"
        for name in ("name", "passed"):
            if name not in outcome:
                return f"field '{where}.{name}' is missing"
        for name, value in outcome.items():
            if name not in _OUTCOME:
                return f"field '{where}.{name}' is unknown"
            expected, nullable = _OUTCOME[name]
            if value is None and nullable:
                continue
            if _wrong(value, expected):
                return f"field '{where}.{name}' has the wrong type ({type(value).__name__})"
    return None


def _wrong(value: Any, expected: type | tuple[type, ...]) -> bool:
    """Whether ``value`` is not of ``expected`` (``True`` is no number)."""
    if isinstance(value, bool) and expected is not bool:
        return True
    return not isinstance(value, expected)


def _numbers_problem(
    event: Mapping[str, Any], fields: Mapping[str, type | tuple[type, ...]], prefix: str
) -> str | None:
    """Why one of ``fields`` of ``event`` is of the wrong type (each may be missing or
    ``null``), if one is."""
    for name, expected in fields.items():
        value = event.get(name)
        if value is not None and _wrong(value, expected):
            return f"field '{prefix}{name}' has the wrong type ({type(value).__name__})"
    return None


def _result_problem(event: Mapping[str, Any]) -> str | None:
    """Why the result fields of an ``agent.finished`` event cannot be read back (a resumed
    run reuses them), if they cannot; each may be missing or ``null``."""
    numbers: dict[str, type | tuple[type, ...]] = {
        "exit_status": int,
        "cost_usd": _NUMBER,
        "duration_s": _NUMBER,
    }
    problem = _numbers_problem(event, numbers, "")
    usage = event.get("usage")
    if problem is not None or usage is None:
        return problem
    if not isinstance(usage, dict):
        return f"field 'usage' has the wrong type ({type(usage).__name__})"
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        value = usage.get(name, 0)  # a count may be missing, not null
        if _wrong(value, int):
            return f"field 'usage.{name}' has the wrong type ({type(value).__name__})"
    return None


def result_key(event: Mapping[str, Any]) -> str | None:
    """The key of a result a resumed run reuses (an agent's, a check round's, an action's,
    a decision's answer), ``None`` for other events."""
    name = event.get("event")
    if name == "agent.finished" and (event.get("ok") or event.get("final")):
        return str(event["key"])
    if name in ("checks.completed", "action.done"):
        return str(event["key"])
    if name in ("foreach.items", "check.finished") and "key" in event:
        return str(event["key"])  # a check: one of a round a run may have died in
    if name == "decision.answered":
        return f"decision:{event['id']}:{event['visit']}"
    if name == "node.transition" and _top_move(event):
        return move_key(str(event["node"]), event["visit"])
    return None


def move_key(node: str, visit: int) -> str:
    """The key of a move of the top level from ``node``'s visit ``visit``: held, like a result,
    until a resumed run makes it again (see ``Runner``)."""
    return f"move:{node}:{visit}"


def _top_move(event: Mapping[str, Any]) -> bool:
    """Whether ``event`` (a ``node.transition``) is a move of the top level with its visit
    (older journals' have none), not one in a foreach item's body."""
    node, visit = event.get("node"), event.get("visit")
    return (
        isinstance(node, str)
        and "/" not in node
        and isinstance(event.get("to"), str)
        and isinstance(visit, int)
        and not isinstance(visit, bool)
    )


def _top_start(event: Mapping[str, Any]) -> bool:
    """Whether ``event`` (a ``node.started``) is a top-level node's, with its visit."""
    node, visit = event.get("node"), event.get("visit")
    return (
        isinstance(node, str)
        and "/" not in node
        and isinstance(visit, int)
        and not isinstance(visit, bool)
        and isinstance(event.get("ts"), str)
    )


class RecordedCalls:
    """An index of the agent calls, check rounds and actions of a journal's tail."""

    def __init__(self, events: Iterable[Mapping[str, Any]] = ()) -> None:
        self._attempts: dict[str, list[str]] = {}
        self._finished: set[str] = set()
        self._results: dict[str, Mapping[str, Any]] = {}
        self._checks: dict[str, list[Mapping[str, Any]]] = {}
        self._finished_checks: dict[str, dict[int, Mapping[str, Any]]] = {}
        self._actions: dict[str, str] = {}
        self._answers: dict[tuple[str, int], Mapping[str, Any]] = {}
        self._needed: dict[tuple[str, int], Mapping[str, Any]] = {}
        self._items: dict[str, Mapping[str, Any]] = {}
        self._moves: list[tuple[str, int, str]] = []
        self._started: dict[tuple[str, int], str] = {}
        for event in events:
            self.add(event)

    def add(self, event: Mapping[str, Any]) -> None:
        name = event.get("event")
        if name == "agent.dispatched":
            self._attempts.setdefault(str(event["key"]), []).append(str(event["attempt"]))
        elif name == "agent.finished":
            self._finished.add(str(event["attempt"]))
            # A timed-out call the node itself handles is a result too (``final``).
            if event.get("ok") or event.get("final"):
                self._results.setdefault(str(event["key"]), event)
        elif name == "checks.completed":
            self._checks[str(event["key"])] = list(event["outcomes"])
        elif name == "check.finished" and "key" in event:
            self._finished_checks.setdefault(str(event["key"]), {})[event["index"]] = event
        elif name == "check.abandoned" and "key" in event:
            # Stopped by a person (Ctrl-C), not killed: what failed may be fixed by now, so
            # it runs again; a check that passed is still not run again.
            finished = self._finished_checks.get(str(event["key"]), {})
            for index in [i for i, done in finished.items() if not done.get("passed")]:
                del finished[index]
        elif name == "action.done":
            self._actions[str(event["key"])] = str(event["outcome"])
        elif name == "decision.answered":
            self._answers.setdefault((str(event["id"]), int(event["visit"])), event)
        elif name == "decision.needed" and isinstance(event.get("visit"), int):
            self._needed.setdefault((str(event.get("id")), event["visit"]), event)
        elif name == "foreach.items" and "key" in event:
            self._items[str(event["key"])] = event
        elif name == "node.transition" and _top_move(event):
            self._moves.append((str(event["node"]), int(event["visit"]), str(event["to"])))
        elif name == "node.started" and _top_start(event):
            self._started.setdefault((str(event["node"]), int(event["visit"])), str(event["ts"]))

    def result(self, key: str) -> Mapping[str, Any] | None:
        """The ``agent.finished`` event of a finished call with ``key``, if recorded."""
        return self._results.get(key)

    def abandoned(self, key: str) -> str | None:
        """The last attempt of ``key`` dispatched but never finished (a run died in it)."""
        attempts = self._attempts.get(key, [])
        if attempts and attempts[-1] not in self._finished:
            return attempts[-1]
        return None

    def checks(self, key: str) -> list[Mapping[str, Any]] | None:
        """The outcomes of a whole check round, if one was recorded under ``key``."""
        return self._checks.get(key)

    def finished_checks(self, key: str) -> dict[int, Mapping[str, Any]]:
        """The ``check.finished`` events of the round ``key``, by the check's place in it
        (a round a run died in: its checks that finished are not run again)."""
        return self._finished_checks.get(key, {})

    def action(self, key: str) -> str | None:
        """The outcome of an action recorded under ``key``, if any."""
        return self._actions.get(key)

    def items(self, key: str) -> Mapping[str, Any] | None:
        """The ``foreach.items`` event of a foreach's visit: the items as first read."""
        return self._items.get(key)

    def answer(self, decision: str, visit: int) -> Mapping[str, Any] | None:
        """The ``decision.answered`` event of a gate's visit, if one was journaled."""
        return self._answers.get((decision, visit))

    def last_visit(self, decision: str) -> int | None:
        """The latest visit of ``decision`` journaled as needed or answered, if any."""
        visits = [v for (d, v) in (*self._answers, *self._needed) if d == decision]
        return max(visits) if visits else None

    def needed(self, decision: str, visit: int) -> Mapping[str, Any] | None:
        """The ``decision.needed`` event of a gate's visit, if one was journaled (a run
        killed before it committed the pending decision)."""
        return self._needed.get((decision, visit))

    def moves_from(self, at: str, visit: int) -> int:
        """How many moves of the top level the journal's tail records, one after the other,
        from visit ``visit`` of node ``at`` on (0: none from there): a run killed before its
        state commit said so had moved on that far."""
        return len(self.path_from(at, visit))

    def path_from(self, at: str, visit: int) -> list[str]:
        """The nodes those moves (:meth:`moves_from`) went to, in their order."""
        start = next(
            (i for i, (node, seen, _) in enumerate(self._moves) if (node, seen) == (at, visit)),
            None,
        )
        if start is None:
            return []
        path: list[str] = []
        for node, _, to in self._moves[start:]:
            if node != at:
                break  # not a walk on from there: nothing more is taken from it
            path.append(to)
            at = to
        return path

    def started(self, node: str, visit: int) -> str | None:
        """When the journal's tail says visit ``visit`` of the top-level ``node`` started
        (a run killed before its state commit said so), if it does."""
        return self._started.get((node, visit))

    def worked_on(self, node: str, visit: int) -> bool:
        """Whether the journal's tail holds a result of visit ``visit`` of ``node`` (an
        agent's answer, a check round or one of its checks) a resumed run would reuse."""
        prefix = f"{node}#{visit}/"
        return any(
            key.startswith(prefix)
            for found in (self._results, self._checks, self._finished_checks)
            for key in found
        )

    def move_keys(self) -> list[str]:
        """The keys of the moves of the top level the journal's tail records."""
        return [move_key(node, visit) for node, visit, _ in self._moves]

    def forget(self, key: str) -> None:
        """Drop the result of ``key`` (it was applied, or turned out unusable)."""
        self._results.pop(key, None)
