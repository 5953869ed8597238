"""What a work item's agents spent, read from its journal (the budget caps count it).

Each ``agent.finished`` event (failed attempts too) adds the cost and the
tokens (input plus output) its backend reported, to the role that made the
call. An attempt dispatched that never reported (phasegate was killed during
it, it is still running, or phasegate's timeout killed it before it reported
anything) counts as the mean of the role's reported calls (nothing while the
role has none). An agent chosen at run time that plays a
workflow role (its ``agent.dispatched`` event has ``plays``) counts for that
role too, as the role->backend binding does (``roles.reviewer`` serves it).
A journal is read once: each later read takes only the lines added since.
The failed attempts' own spend is kept apart too: ``status``'s usage adds it to
the calls whose result the workflow used.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from phasegate.errors import TIMEOUT_EXIT

Metric = Literal["usd", "tokens"]


@dataclass
class RoleSpend:
    """What one role's attempts on the item spent, as their results reported it."""

    attempts: int = 0
    failed: int = 0
    reported: int = 0
    usd: float = 0.0
    tokens: int = 0
    #: Attempts dispatched that never reported (killed, timed out before reporting
    #: anything, or still running).
    open: set[str] = field(default_factory=set)
    #: What the failed attempts reported (a subset of ``usd`` and ``tokens``).
    failed_usd: float = 0.0
    failed_input_tokens: int = 0
    failed_output_tokens: int = 0
    #: Failed attempts whose result the workflow used all the same (a review that ran
    #: out of time and ended by its ``on_timeout``): the state's usage counts them.
    failed_used: int = 0
    #: Reported calls whose backend gave no cost (codex, gemini, openai without ``pricing``):
    #: their USD is not measured (``usd`` counts them as nothing).
    uncosted: int = 0

    def total(self, metric: Metric) -> float:
        return self.usd if metric == "usd" else float(self.tokens)


@dataclass(frozen=True)
class Spend:
    """An item's spend by role, read from its journal."""

    roles: Mapping[str, RoleSpend]
    #: Workflow role -> the agents chosen at run time that played it.
    players: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def _mean(self, role: str, metric: Metric) -> float:
        found = self.roles.get(role)
        if found is None or not found.reported:
            return 0.0
        return found.total(metric) / found.reported

    def estimate(self, role: str, metric: Metric, plays: str | None = None) -> float:
        """What the next call of ``role`` is expected to spend: its mean call; for an agent
        without a reported call yet that plays a workflow role, that role's mean call (of
        every agent that played it)."""
        found = self.roles.get(role)
        if (found is not None and found.reported) or plays is None:
            return self._mean(role, metric)
        players = [self.roles[n] for n in self.names(plays) if n in self.roles]
        reported = sum(p.reported for p in players)
        return sum(p.total(metric) for p in players) / reported if reported else 0.0

    def known(self, role: str, plays: str | None = None) -> bool:
        """Whether :meth:`estimate` has a reported call to go by (a reported call without a
        cost counts: its estimate is known to be nothing)."""
        found = self.roles.get(role)
        if found is not None and found.reported:
            return True
        if plays is None:
            return False
        return any(self.roles[n].reported for n in self.names(plays) if n in self.roles)

    def spent(self, role: str | None, metric: Metric) -> float:
        """What ``role`` (``None``: the whole item) spent, unreported attempts estimated;
        a workflow role's spend includes that of the agents that played it."""
        names = list(self.roles) if role is None else self.names(role)
        total = 0.0
        for name in names:
            found = self.roles.get(name)
            if found is not None:
                total += found.total(metric) + len(found.open) * self._mean(name, metric)
        return total

    def uncosted(self, role: str | None) -> int:
        """How many reported calls of ``role`` (``None``: the whole item) had no cost."""
        names = list(self.roles) if role is None else self.names(role)
        return sum(self.roles[name].uncosted for name in names if name in self.roles)

    def names(self, role: str) -> list[str]:
        """``role`` and the agents that played it (the roles a cap of ``role`` counts)."""
        return [role, *sorted(self.players.get(role, frozenset()) - {role})]

    def failed_usage(self) -> dict[str, Any]:
        """What the failed attempts reported, in ``status``'s usage keys (the state's
        usage counts only the calls whose result the workflow used, so a failed attempt
        whose result it used is left out here), and ``failedCalls``: every failed attempt."""
        roles = self.roles.values()
        return {
            "calls": sum(r.failed - r.failed_used for r in roles),
            "failedCalls": sum(r.failed for r in roles),
            "inputTokens": sum(r.failed_input_tokens for r in roles),
            "outputTokens": sum(r.failed_output_tokens for r in roles),
            "costUsd": round(sum(r.failed_usd for r in roles), 6),
        }

    def summary(self) -> dict[str, Any]:
        """The item's totals, as ``status --json`` shows them under ``budget.spent``."""
        return {
            "usd": round(self.spent(None, "usd"), 6),
            "tokens": round(self.spent(None, "tokens")),
            "attempts": sum(r.attempts for r in self.roles.values()),
            "failed": sum(r.failed for r in self.roles.values()),
            "unreported": sum(len(r.open) for r in self.roles.values()),
        }


class SpendLedger:
    """The spend of one journal, read incrementally: each call reads only the new lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._reset(None)

    def _reset(self, inode: int | None) -> None:
        self._offset = 0
        self._inode = inode
        self._roles: dict[str, RoleSpend] = {}
        self._owner: dict[str, str] = {}  # attempt id -> role
        self._players: dict[str, set[str]] = {}  # workflow role -> agents that played it

    def read(self) -> Spend:
        """The spend recorded so far (complete lines only: a line being written waits)."""
        with self._lock:
            try:
                with open(self.path, "rb") as handle:
                    info = os.fstat(handle.fileno())
                    if info.st_ino != self._inode or info.st_size < self._offset:
                        self._reset(info.st_ino)  # a new or replaced journal
                    handle.seek(self._offset)
                    data = handle.read()
            except FileNotFoundError:
                self._reset(None)
                data = b""
            end = data.rfind(b"\n")
            if end >= 0:
                for line in data[:end].split(b"\n"):
                    if b'"agent.' in line:
                        self._add(line)
                self._offset += end + 1
            return Spend(
                {k: _copy(v) for k, v in self._roles.items()},
                {k: frozenset(v) for k, v in self._players.items()},
            )

    def _add(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return  # the engine reports a corrupt journal line when it reads it
        if not isinstance(event, dict):
            return
        name, attempt = event.get("event"), str(event.get("attempt"))
        if name == "agent.dispatched":
            role = str(event.get("role"))
            spend = self._roles.setdefault(role, RoleSpend())
            spend.attempts += 1
            spend.open.add(attempt)
            self._owner[attempt] = role
            plays = event.get("plays")
            if isinstance(plays, str) and plays and plays != role:
                self._players.setdefault(plays, set()).add(role)
        elif name == "agent.finished":
            role = self._owner.get(attempt, str(event.get("role")))
            spend = self._roles.setdefault(role, RoleSpend())
            usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
            assert isinstance(usage, dict)
            given, taken = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
            cost = event.get("cost_usd")
            usd = (
                float(cost)
                if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0
                else 0.0
            )
            spend.failed += 0 if event.get("ok") else 1
            if (
                not event.get("ok")
                and event.get("exit_status") == TIMEOUT_EXIT
                and given + taken == 0
                and usd == 0.0
            ):
                # Killed at phasegate's timeout before it reported: it spent all the same,
                # unknown how much, so it stays an unreported attempt (the role's mean call).
                self._owner.setdefault(attempt, role)
                spend.open.add(attempt)
                spend.failed_used += 1 if event.get("final") else 0
                return
            spend.open.discard(attempt)
            spend.reported += 1
            spend.tokens += given + taken
            spend.usd += usd
            if cost is None and given + taken > 0:
                spend.uncosted += 1
            if not event.get("ok") and event.get("final"):
                spend.failed_used += 1  # its result was used: the state's usage has it
            elif not event.get("ok"):
                spend.failed_usd += usd
                spend.failed_input_tokens += given
                spend.failed_output_tokens += taken


def _count(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _copy(spend: RoleSpend) -> RoleSpend:
    return RoleSpend(
        spend.attempts,
        spend.failed,
        spend.reported,
        spend.usd,
        spend.tokens,
        set(spend.open),
        spend.failed_usd,
        spend.failed_input_tokens,
        spend.failed_output_tokens,
        spend.failed_used,
        spend.uncosted,
    )


_LEDGERS: dict[Path, SpendLedger] = {}
_LEDGERS_LOCK = threading.Lock()


def read_spend(journal: Path) -> Spend:
    """The spend recorded in the journal at ``journal`` (cached per file, read incrementally)."""
    with _LEDGERS_LOCK:
        ledger = _LEDGERS.get(journal)
        if ledger is None:
            ledger = _LEDGERS[journal] = SpendLedger(journal)
    return ledger.read()
