"""What the graph walk passes around: run options, outcomes, effects and cursors.

A node handler is a generator of *effects* (:class:`Call`, :class:`Checks`)
that returns an :class:`Outcome`; a scope's walk ends at an :class:`End`. A
cursor says where a scope is: the item's top level, or one foreach item's body.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from phasegate.engine.calls import CallSpec
from phasegate.engine.checks import CheckRound
from phasegate.engine.state import EngineState
from phasegate.workflow.model import AgentNode

_ITEM_KEY = re.compile(r"\[[^\]]*\]")


class Asker(Protocol):
    """How the engine asks a person; the CLI supplies a terminal or a no-terminal one."""

    @property
    def interactive(self) -> bool: ...

    def choose(self, question: str, choices: Sequence[str], default: str | None) -> str: ...

    def confirm(self, question: str, default: bool) -> bool: ...


class NoTerminal:
    """The asker used without a terminal: it never waits on stdin.

    ``on_waiting`` is told when the run waits for an answer given elsewhere
    (``run --wait``), with how it can be answered (the ``waiting`` notification).
    """

    interactive = False

    def __init__(self, on_waiting: Callable[[str], None] | None = None) -> None:
        self.on_waiting = on_waiting

    def choose(self, question: str, choices: Sequence[str], default: str | None) -> str:
        return default or ""

    def confirm(self, question: str, default: bool) -> bool:
        return default


@dataclass(frozen=True)
class RunOptions:
    """Flags of ``phasegate run``."""

    phase: str | None = None
    until: str | None = None
    no_review: bool = False
    partial: str | None = None
    yes: bool = False
    command: str | None = None
    #: Answers given on the command line, by decision id (``--answer ID=CHOICE``, aliases).
    answers: Mapping[str, str] = field(default_factory=dict)
    #: Of ``answers``, those a command gives as its default (no flag was given for them).
    default_answers: frozenset[str] = frozenset()
    #: Wait for decisions answered by ``phasegate answer`` instead of exiting 3.
    wait: bool = False
    jobs: int | None = None
    #: Shows a person the files of a decision when they answer ``view`` at a terminal.
    viewer: Callable[[str], None] | None = None


@dataclass(frozen=True)
class Workspace:
    """Where the nodes of one parallel item work: its worktree, and the commit it started at."""

    workdir: Path
    base: str | None = None


@dataclass
class Outcome:
    """How a node ended: an outcome name (or an explicit target), and issues it passes on."""

    name: str
    target: str | None = None
    issues: list[dict[str, Any]] = field(default_factory=list)
    #: Continue the target node's loop with this much more budget (a gate's ``extend``).
    extend: int | None = None
    #: Enter the target at its reviewers (``review``) rather than its executor.
    start_with: str | None = None
    #: Why the item moved on, as its history records it.
    cause: str | None = None


@dataclass(frozen=True)
class End:
    """The end node a scope reached."""

    outcome: str
    status: str
    message: str
    path: str
    label: str


class RunStop(Exception):
    """Stop the walk cleanly (``--until``, ``--phase``, a command's stop label)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class CaughtUp(Exception):
    """The walk of a resumed run reached the node the journal says the interrupted run had
    moved to (its state file lagged the journal): the run goes on from there."""


# Effects a handler yields; the driver performs them and sends the result back.
@dataclass(frozen=True)
class Call:
    spec: CallSpec


@dataclass(frozen=True)
class Checks:
    round: CheckRound


Effect = Call | Checks
Steps = Generator[Effect, Any, Outcome]


class Cursor(Protocol):
    def get(self) -> str | None: ...

    def set(self, value: str | None) -> None: ...


class TopCursor:
    def __init__(self, state: EngineState) -> None:
        self.state = state

    def get(self) -> str | None:
        return self.state.at

    def set(self, value: str | None) -> None:
        self.state.at = value


class ItemCursor:
    """The cursor of one foreach item's body."""

    def __init__(self, state: EngineState, foreach_path: str, key: str) -> None:
        self.state, self.path, self.key = state, foreach_path, key

    def get(self) -> str | None:
        found = self.state.node(self.path).mapping("items").get(self.key) or {}
        value = found.get("at")
        return str(value) if value is not None else None

    def set(self, value: str | None) -> None:
        self.state.node(self.path).mapping("items").setdefault(self.key, {})["at"] = value


@functools.lru_cache(maxsize=4096)  # asked several times a step, for a few paths
def definition_path(path: str) -> str:
    """``tasks[T3]/code`` -> ``tasks/code`` (the node's place in the workflow file)."""
    return _ITEM_KEY.sub("", path) if "[" in path else path


_last_entered = [0]


def entered_stamp() -> str:
    """When a node is entered, to the microsecond (``2026-01-30T10:30:00.123456Z``), never
    the same twice in a process: ``.review-history.md`` lists its sections in this order,
    and several fast phases start within one second."""
    micros = max(time.time_ns() // 1000, _last_entered[0] + 1)
    _last_entered[0] = micros
    seconds, fraction = divmod(micros, 1_000_000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{fraction:06d}Z"


def enter_node(
    workflow: Any,
    state: EngineState,
    path: str,
    incoming: Mapping[str, Any] | None = None,
    start_with: str | None = None,
) -> None:
    """Start a fresh visit of ``path``: its state reset, the incoming issues kept.

    ``start_with: review`` starts an agent node at its reviewers (the work is there).
    """
    previous = state.peek(path)
    visit = (previous.visit if previous is not None else 0) + 1
    node = workflow.node(definition_path(path))
    fresh: dict[str, Any] = {"visit": visit, "entered": entered_stamp()}
    if isinstance(node, AgentNode):
        first = start_with or node.start_with
        fresh["stage"] = "review:0" if first == "review" else "execute"
        fresh["iteration"] = 1
    if incoming:
        fresh["incoming"] = dict(incoming)
    if previous is not None and previous.get("usage"):
        fresh["usage"] = previous.get("usage")
    state.node(path).d = fresh
