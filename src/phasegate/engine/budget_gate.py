"""The ``budget`` gate: before each dispatch, stop at a reached cap and ask to raise it.

:class:`BudgetGuard` is the dispatch guard a run installs on its backends
(:attr:`phasegate.engine.calls.Backends.guard`); ``call_agent`` calls it before
every attempt. When a cap would be passed (:func:`phasegate.engine.budget.check`)
nothing is dispatched: the decision ``budget`` is asked like every gate
(pending on disk before it is asked; at a terminal a prompt; else exit 3 with
``phasegate answer ITEM budget raise``). Its choices:

- ``raise``: the cap goes up by its configured amount (a $5 cap becomes $10; as many
  times that as the held call needs to go on: :func:`phasegate.engine.budget.raise_step`),
  or by the amount a note gives (``raise: 2.5``, in the cap's unit: USD, or
  tokens: a whole number), for this item only; the run goes on;
- ``stop``: the run stops (exit 4) without calling the agent; running again
  asks again.

The raise is recorded in the item's engine state (``budget.raises``) together
with the answer it came from, so it is added exactly once, even when the run
stops between the answer and the next call.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from phasegate.engine.answers import Question
from phasegate.engine.budget import (
    BUDGET_DECISION,
    Allowed,
    Reached,
    amount,
    budget_record,
    caps_of,
    check,
    check_role_keys,
    configured,
    holding,
    pending_raise,
    raise_step,
    raised_too,
    unacted_answer,
    unmeasured_usd,
)
from phasegate.engine.gates import ask
from phasegate.engine.spend import read_spend
from phasegate.errors import BlockedError, WaitingForHuman

if TYPE_CHECKING:
    from phasegate.engine.calls import CallSpec
    from phasegate.engine.run import Run


class BudgetReached(WaitingForHuman):
    """A cap was reached where no person can be asked (a worker thread): run again."""


def _bound(run: Run) -> list[str]:
    """The workflow's roles served by a configured binding (not a backend given in code)."""
    from phasegate.errors import ConfigError

    found = []
    for role in run.item.workflow.roles:
        try:
            if run.backends.binding(role) is not None:
                found.append(role)
        except ConfigError:
            continue  # reported when the role is called
    return found


class BudgetGuard:
    """Checks each dispatch of one run against the item's caps (see the module docstring)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        item = run.item
        # A role cap that names no role nor agent would cap nothing: refused before any work.
        check_role_keys(item.config, item.repo, item.workflow.name, item.workflow.roles)
        self.enabled = configured(item.config, item.workflow.name)
        if self.enabled:
            # Said once, as the run starts: a USD cap over calls that report no cost.
            for line in unmeasured_usd(item.config, item.workflow.name, _bound(run)):
                item.record("budget.unmeasured", text=line)
        #: Gates are asked on the engine's thread only: the one that built the guard.
        self._engine_thread = threading.get_ident()
        #: A ``stop`` answer was acted on in this run: other calls a cap holds stop too
        #: (a parallel loop's items), rather than ask again what was just answered.
        self._stopped: str | None = None

    def __call__(self, spec: CallSpec) -> float | None:
        """The USD the call may spend at most (``None``: no USD cap), or stop at the gate."""
        run = self.run
        if not self.enabled:
            self.withdraw_stale(None)
            return None
        while True:
            on_engine_thread = threading.get_ident() == self._engine_thread
            answered = unacted_answer(run.state) if on_engine_thread else None
            if answered is not None and answered[0] == "raise":
                self.add_raise(answered[2])
                answered = None
            caps = caps_of(run.item.config, run.item.workflow.name, run.state)
            spend = read_spend(run.item.journal.path)
            found = check(caps, spend, spec.role, spec.plays)
            if isinstance(found, Allowed):
                if answered is not None and self._asked_for(spec):
                    self.acted(answered[2])  # a stop no longer needed (the cap was changed)
                if on_engine_thread:
                    self.went_on(spec)
                self.withdraw_stale(spec.path)
                return found.max_usd
            others = [
                other
                for other in holding(caps, spend, spec.role, spec.plays)
                if other.cap.key != found.cap.key
            ]
            reached = self._reached(found, spec, others)
            from phasegate.engine.status import again_command

            again = again_command(run.workflow, run.item.name, run.label(spec.path))
            if not on_engine_thread:
                raise BudgetReached(f"{reached} Run again to decide: {again}")
            if answered is not None or self._stopped is not None:
                if answered is not None:
                    self.acted(answered[2])
                    self._stopped = answered[0]
                run.item.record("budget.stopped", cap=found.cap.key, node=spec.path, sync_now=True)
                run.save(durable=True)
                raise BlockedError(
                    f"{reached} Stopped at the budget cap as answered ({self._stopped}); run "
                    f"again to be asked again: {again}"
                )
            self.ask(found, spec, reached, others)

    def _asked_for(self, spec: CallSpec) -> bool:
        """Whether the budget question was asked for ``spec``'s node (in a parallel loop,
        another item's call that no cap holds leaves the answer to the call it is about)."""
        asked = (budget_record(self.run.state).get("asked") or {}).get("node")
        return asked is None or asked == spec.path

    def unestimated(self, spec: CallSpec) -> bool:
        """Whether a cap counts ``spec``'s call and nothing estimates it yet (its role has no
        reported call): a parallel loop sends one such call at a time, so that a cap is
        passed by one call at most, as in a sequential run."""
        if not self.enabled:
            return False
        caps = caps_of(self.run.item.config, self.run.item.workflow.name, self.run.state)
        if not any(cap.applies_to(spec.role, spec.plays) for cap in caps):
            return False
        return not read_spend(self.run.item.journal.path).known(spec.role, spec.plays)

    def _reached(self, found: Reached, spec: CallSpec, others: list[Reached]) -> str:
        cap, unit = found.cap, found.cap.metric
        line = (
            f"{self.run.item.name}: the budget cap of {cap.scope} ({cap.key}) is "
            f"{amount(cap.limit, unit)} and {amount(found.spent, unit)} "
            f"{'are' if unit == 'tokens' else 'is'} spent"
        )
        if found.spent < cap.limit and found.estimate:
            line += f"; the next call is estimated at {amount(found.estimate, unit)}"
        if others:
            keys = ", ".join(other.cap.key for other in others)
            line += f" ({keys} {'hold' if len(others) > 1 else 'holds'} it too)"
        return line + f". The {spec.role} call of {spec.path} was not started."

    def ask(self, found: Reached, spec: CallSpec, reached: str, others: list[Reached]) -> None:
        """Ask whether to raise ``found``'s cap, and ``others`` (the caps that hold the call
        too) with it when no amount is given (the caller acts on the answer)."""
        run = self.run
        cap, unit = found.cap, found.cap.metric
        visit = _visit(run)
        record = budget_record(run.state)
        # A raise without an amount adds the cap's amount, as many times as the call needs.
        step = raise_step(found)
        record["asked"] = {
            "visit": visit,
            "cap": cap.key,
            "unit": unit,
            "step": step,
            "node": spec.path,
            "also": [
                {"cap": other.cap.key, "unit": other.cap.metric, "step": raise_step(other)}
                for other in others
            ],
        }
        run.state["budget"] = record  # saved with the pending decision, before it is asked
        question = Question(
            id=BUDGET_DECISION,
            question=f"{reached} Raise the cap for this item, or stop?",
            choices={
                "raise": (
                    f"raise it by {amount(step, unit)}"
                    + "".join(
                        f", and {o.cap.key} by {amount(raise_step(o), o.cap.metric)}"
                        for o in others
                    )
                    + " for this item (another "
                    f"amount as a note, in {'whole tokens' if unit == 'tokens' else 'USD'}: "
                    f"'raise: AMOUNT'{f', for {cap.key} alone' if others else ''})"
                ),
                "stop": "stop here; no agent is called",
            },
            visit=visit,
            unanswered_message=reached,
            context=spec.path,
            amount_notes=("raise",),
            whole_amounts=unit == "tokens",
        )
        answer = ask(run, question)
        if answer.by == "flag":
            run.presets.pop(BUDGET_DECISION, None)  # --answer budget=raise raises it once

    def withdraw_stale(self, node: str | None) -> None:
        """A budget decision still pending although no cap stops the call now (the config
        was changed instead of answering): it no longer waits for anyone.

        ``node`` is the call's node: only the call the question was asked for says so (in a
        parallel loop another item's call may pass while that one is still stopped);
        ``None``: no cap is configured any more."""
        if threading.get_ident() != self._engine_thread:
            return
        record = self.run.state.decisions.get(BUDGET_DECISION)
        if record is None or record.get("status") != "pending":
            return
        asked = (budget_record(self.run.state).get("asked") or {}).get("node")
        if node is not None and asked is not None and asked != node:
            return
        del self.run.state.decisions[BUDGET_DECISION]
        self.run.item.record(
            "decision.withdrawn",
            id=BUDGET_DECISION,
            visit=int(record.get("visit", 0)),
            reason="no budget cap stops the call any more",
        )

    def went_on(self, spec: CallSpec) -> None:
        """The call the answered question held goes ahead (a raise added, or the cap was
        changed after a ``stop``): ``budget.went_on`` records the question's visit, so that
        ``status`` does not report the stop of a question no longer holding anything."""
        run = self.run
        decision = run.state.decisions.get(BUDGET_DECISION)
        record = budget_record(run.state)
        asked = record.get("asked")
        if decision is None or decision.get("status") != "answered":
            return
        if not isinstance(asked, Mapping) or asked.get("node") != spec.path:
            return
        if record.get("went_on") == asked.get("visit"):
            return
        record["went_on"] = asked.get("visit")
        run.state["budget"] = record
        run.save(durable=True)  # before the call: a run killed during it has gone past the cap

    def acted(self, visit: int) -> None:
        record = budget_record(self.run.state)
        record["acted"] = visit
        self.run.state["budget"] = record

    def add_raise(self, visit: int) -> None:
        """Add the raise the answer of ``visit`` gave, once (``budget.acted`` records it)."""
        run = self.run
        waiting = pending_raise(run.state)
        too = raised_too(run.state)  # the other caps that held the call, by their amount
        self.acted(visit)
        if waiting is None:
            return
        key, extra, _ = waiting
        record = budget_record(run.state)
        asked = record.get("asked") or {}
        units = {key: str(asked.get("unit", "usd"))}
        units.update({str(o.get("cap")): str(o.get("unit")) for o in asked.get("also") or []})
        raises = dict(record.get("raises") or {})
        for cap, by in [(key, extra), *too]:
            raises[cap] = round(float(raises.get(cap, 0.0)) + by, 6)
            said = amount(by, "tokens") if units.get(cap) == "tokens" else amount(by, "usd")
            run.item.record(
                "budget.raised",
                cap=cap,
                by=by,
                raised=raises[cap],
                text=f"{cap} raised by {said}",
                sync_now=True,
            )
        record["raises"] = raises
        run.state["budget"] = record
        run.save(durable=True)


def _visit(run: Run) -> int:
    record = run.state.decisions.get(BUDGET_DECISION)
    if record is None:  # never asked, or withdrawn: visits go on from the last one asked
        return int((budget_record(run.state).get("asked") or {}).get("visit", 0)) + 1
    visit = int(record.get("visit", 0))
    return visit if record.get("status") == "pending" else visit + 1
