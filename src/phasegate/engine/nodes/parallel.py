"""A parallel ``foreach``: items whose dependencies are done run at once, each isolated.

The engine's thread is the only one that touches the state: it starts items,
advances each item's body (a generator of effects, exactly as a sequential
foreach runs it) and commits. Agent calls and check rounds run on a bounded
pool of worker threads; each journals its own result (the write-ahead record)
and returns it. Results that arrive together are applied in plan order.

With ``isolation: worktree`` (the default) each item works in its own git
worktree and branch (see :mod:`phasegate.engine.fanout_git`, and
:mod:`phasegate.engine.nodes.parallel_git` for the loop's side): it starts from
the fan-out's base, or from the merge of its dependencies' commits; its work
is committed when its body ends; finished items are merged in plan order, and
the merged work is put into the work tree when the fan-out ends. A merge
conflict is repaired by an agent in a fresh worktree, then asked about; one a
person stops parks its item (blocked) with the loop kept for the next run.

An item that stops for a person, is blocked or fails is parked: the others
go on; when nothing more can run, the first parked item's error (in plan
order) ends the run, and the next run resumes every item where it was.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Generator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from phasegate.engine.budget import BUDGET_DECISION
from phasegate.engine.budget_gate import BudgetGuard, BudgetReached
from phasegate.engine.calls import CallSpec, call_agent, recover_call
from phasegate.engine.checks import recorded_round, run_check_round
from phasegate.engine.fanout_git import FanoutGit
from phasegate.engine.item_commits import coalesce_seconds
from phasegate.engine.nodes.foreach import dependency_order
from phasegate.engine.nodes.parallel_git import DONE, SETTLED, begin, integrate, land, start_commit
from phasegate.engine.plugin_api import Task
from phasegate.errors import BlockedError, PhasegateError, WaitingForHuman
from phasegate.process import stop_running_children
from phasegate.state.journal import utc_now
from phasegate.workflow.model import ForeachNode

#: How often one item's call may come back from its worker at a budget cap before the
#: cap's error ends its part of the run (spending by others can move a cap each time).
_REQUEUES = 3

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Effect, End, Outcome


@dataclass
class _Active:
    """An item whose body is under way."""

    key: str
    steps: Generator[Effect, Any, End]
    effect: Effect | None = None
    future: Future[Any] | None = None


class FanOut:
    """One run of one parallel foreach (see the module docstring)."""

    def __init__(self, run: Run, path: str, node: ForeachNode, task: Task | None, jobs: int):
        self.run, self.path, self.node, self.task, self.jobs = run, path, node, task, jobs
        self.item = run.item
        self.order: list[str] = list(run.state.node(path)["order"])
        self.rank = {key: i for i, key in enumerate(self.order)}
        self.active: dict[str, _Active] = {}
        #: Items that stopped with an error this run (waiting, blocked, failed), by key.
        self.parked: dict[str, BaseException] = {}
        #: Calls sent back from a worker to the engine's thread by a budget cap, by item.
        self.requeued: dict[str, int] = {}
        #: The item whose call is under way with no estimate for a cap (its role had not
        #: reported yet): the others' such calls wait for it (see ``submit``).
        self.unestimated: str | None = None
        self.halted = False  # an item ended other than done: no new item starts
        self.stop = threading.Event()
        self.git: FanoutGit | None = None
        #: The order ready items start in: the items a killed or stopped run left running
        #: first, then the longest chain of dependents first, then plan order (plan order
        #: alone when one item runs at a time).
        self._priority: list[str] | None = None

    # -- state ---------------------------------------------------------------------------

    def entries(self) -> dict[str, Any]:
        return self.run.state.node(self.path).mapping("items")

    def fan(self) -> dict[str, Any]:
        return self.run.state.node(self.path).mapping("fanout")

    def prefix(self, key: str) -> str:
        return f"{self.path}[{key}]/"

    def save(self, *, lazy: bool = False, durable: bool = False) -> None:
        """Commit the state; the loop's node is marked changed first (its entries and
        records are changed in place, between commits)."""
        self.run.state.touched(self.path)
        self.run.save(lazy=lazy, durable=durable)

    def journal(self, event: str, **data: Any) -> None:
        self.item.record(event, node=self.path, **data)

    # -- the loop ------------------------------------------------------------------------

    def run_all(self) -> Outcome:
        from phasegate.engine.walk import Outcome

        begin(self)
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="phasegate-item")
        try:
            with self.item.grouped():
                while True:
                    integrate(self)
                    started = self.start_ready()
                    if not self.active:
                        if started:
                            continue  # they ended as they resumed: their dependents may be ready
                        break
                    self.submit(pool)
                    # Commits are grouped (the journal holds every result meanwhile) and
                    # made while the agents just started work.
                    self.item.flush_if_due()
                    self.collect()
                outcome = self.conclude()
        except BaseException:
            self.abandon()
            raise
        finally:
            self.item.flush()
            pool.shutdown(wait=True, cancel_futures=True)
        return Outcome(outcome)

    def ready(self, key: str) -> bool:
        entries = self.entries()
        entry = entries[key]
        if entry["status"] in SETTLED or key in self.active or key in self.parked:
            return False
        if entry["status"] not in ("pending", "running"):
            return False  # ended other than done
        for dep in entry.get("deps") or ():
            found = entries.get(dep)
            if found is not None and found["status"] not in SETTLED:
                return False  # a skipped dependency (ticked in the plan) holds nothing back
        return True

    def heights(self) -> dict[str, int]:
        """How long a chain of items waits on each one (1: none): the longest go first."""
        entries = self.entries()
        dependents: dict[str, list[str]] = {k: [] for k in self.order}
        for key in self.order:
            for dep in entries[key].get("deps") or ():
                if dep in dependents:
                    dependents[dep].append(key)
        height: dict[str, int] = {}
        # Dependents first, whatever the plan's order (``order: document`` may list an item
        # before what it depends on); ``begin`` refused cycles.
        for task in reversed(
            dependency_order([Task.from_dict(k, entries[k]) for k in self.order], self.path)
        ):
            height[task.key] = 1 + max((height[k] for k in dependents[task.key]), default=0)
        return height

    def start_ready(self) -> bool:
        """Start the ready items (those the last run left running first, then the longest
        chains of dependents) while there is room; whether any started or was skipped.

        Items are marked running in one commit before their worktrees are made,
        so a resumed run keeps what their agents did there. An item whose calls were
        all recorded before a crash ends as it starts.
        """
        if self._priority is None:
            # One at a time (a loop under way resumed with --jobs 1): plan order, as a
            # plain foreach runs its items; the order cannot shorten the run then.
            height = self.heights() if self.jobs > 1 else dict.fromkeys(self.order, 1)
            # Items the last run left running (it was killed, or stopped) resume first: their
            # work is under way in their worktrees, and a free slot never goes to an item
            # not started yet while one of them waits.
            entries = self.entries()
            self._priority = sorted(
                self.order,
                key=lambda k: (entries[k]["status"] != "running", -height[k], self.rank[k]),
            )
        starting: list[tuple[str, str | None, bool]] = []
        skipped = False
        for key in self._priority:
            if self.halted or self.stop.is_set() or len(self.active) + len(starting) >= self.jobs:
                break
            entry = self.entries()[key]
            if (
                entry["status"] == "pending"
                and self.node.skip_done
                and entry.get("done")
                and not entry.get("started_at")
            ):
                entry["status"] = "skipped"
                reason = entry.get("skip_reason") or "already done"
                self.journal("foreach.item", key=key, status="skipped", reason=reason)
                self.save(lazy=True)
                skipped = True
                continue
            if not self.ready(key):
                continue
            resuming = entry["status"] == "running"
            entry.pop("parked", None)
            entry.pop("waits_on", None)
            begun: str | None = None
            if self.git is not None:
                try:
                    begun = start_commit(self, key)
                except PhasegateError as exc:
                    self.park(key, exc)
                    continue
                if begun is None:
                    continue  # its dependencies conflict: it waits, or the loop ends
            if not resuming:
                entry["status"] = "running"
                entry["started_at"] = utc_now()
                if self.git is not None:
                    entry["worktree"] = str(self.git.path(key).relative_to(self.item.repo))
                self.journal(
                    "foreach.item",
                    key=key,
                    status="running",
                    title=entry.get("title", ""),
                    worktree=entry.get("worktree"),
                )
            starting.append((key, begun, resuming))
        if self.git is not None and any(not resuming for _, _, resuming in starting):
            self.save()
        for key, begun, resuming in starting:
            self.start(key, begun, resuming)
        return skipped or bool(starting)

    def start(self, key: str, begun: str | None, resuming: bool) -> None:
        """Make ``key``'s worktree (or take it back) and run its body to its first call."""
        from phasegate.engine.walk import ItemCursor, Workspace, definition_path

        if self.git is not None and begun is not None:
            where = self.git.prepare(key, begun, reuse=resuming)
            self.run.workspaces[self.prefix(key)] = Workspace(where, begun)
        current = Task.from_dict(key, self.entries()[key])
        steps = self.run.frame(
            definition_path(self.path) + "/",
            self.prefix(key),
            tuple(self.node.body),
            ItemCursor(self.run.state, self.path, key),
            self.node.body[0].id,
            current,
        )
        active = _Active(key, steps)
        self.active[key] = active
        self.advance(active, None, first=True)

    # -- effects ---------------------------------------------------------------------------

    def advance(self, active: _Active, value: Any, *, first: bool = False) -> None:
        """Send ``value`` into the item's body until it needs a worker (or ends)."""
        from phasegate.engine.walk import Call

        while True:
            # Other items committed since this one last ran: what its body holds on to
            # must be written by its next commit, as in a sequential run.
            self.run.state.touched_under(self.prefix(active.key))
            try:
                effect = next(active.steps) if first else active.steps.send(value)
            except StopIteration as stop:
                self.ended(active.key, stop.value)
                return
            except PhasegateError as exc:
                self.park(active.key, exc)
                return
            first = False
            immediate = self.recorded(effect)
            if immediate is None:
                active.effect, active.future = effect, None
                if isinstance(effect, Call):
                    self.run.backends.for_role(  # made here, not in a worker
                        effect.spec.role, effect.spec.plays
                    )
                return
            value = immediate[0]
            self.item.applied(effect.spec.key if isinstance(effect, Call) else effect.round.key)

    def recorded(self, effect: Effect) -> tuple[Any] | None:
        from phasegate.engine.walk import Call

        if isinstance(effect, Call):
            found = recover_call(self.item, effect.spec, self.run.backends)
        else:
            found = recorded_round(self.item, effect.round)  # type: ignore[assignment]
        return (found,) if found is not None else None

    def submit(self, pool: ThreadPoolExecutor) -> None:
        from phasegate.engine.walk import Call

        waiting = [a for a in self.active.values() if a.effect is not None and a.future is None]
        for active in sorted(waiting, key=lambda a: self.rank[a.key]):
            effect = active.effect
            guard = self.run.backends.guard
            blind = False
            if isinstance(effect, Call) and isinstance(guard, BudgetGuard):
                # A cap counts this call and no call of its role has reported a cost to
                # estimate it by: it waits while another such call is under way (else
                # the first calls, all at once, could pass a cap by up to ``jobs`` calls).
                blind = guard.unestimated(effect.spec)
                if blind and self.unestimated not in (None, active.key):
                    continue
            if isinstance(effect, Call) and guard is not None:
                # Budget caps are checked here, on the engine's thread, where a gate can
                # be asked and saved; the item waits (parked) if a cap stops its call.
                try:
                    guard(effect.spec)
                except PhasegateError as exc:
                    self.park(active.key, exc, budget=isinstance(exc, WaitingForHuman))
                    continue
            if blind:
                self.unestimated = active.key
            if isinstance(effect, Call):
                # Built on this thread: building reads the state the engine changes.
                spec = replace(effect.spec, build_prompt=_fixed(effect.spec.build_prompt()))
                work = contextvars.copy_context().run
                active.future = pool.submit(work, self.call, spec)
            elif effect is not None:
                work = contextvars.copy_context().run
                active.future = pool.submit(
                    work, run_check_round, self.item, self.run.state, effect.round, in_worker=True
                )

    def call(self, spec: CallSpec) -> Any:
        return call_agent(
            self.item,
            self.run.state,
            self.run.backends,
            spec,
            in_worker=True,
            stopping=self.stop.is_set,
        )

    def collect(self) -> None:
        """Wait for at least one worker; apply what finished, in plan order."""
        from phasegate.engine.walk import Call

        futures = {a.future: a for a in self.active.values() if a.future is not None}
        done, _ = wait(list(futures), timeout=coalesce_seconds(), return_when=FIRST_COMPLETED)
        if not done:
            # Nothing came back within the group-commit window: the state file (and the
            # view) catch up with the journal before waiting on the agents' long work.
            self.item.flush()
            done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
        for future in sorted(done, key=lambda f: self.rank[futures[f].key]):
            active = futures[future]
            effect = active.effect
            active.effect, active.future = None, None
            if self.unestimated == active.key:
                self.unestimated = None  # its cost is known now (or it did not report)
            try:
                value = future.result()
            except BudgetReached as exc:
                # A cap reached on the worker's thread (spent meanwhile, or by a failed
                # attempt before a retry): no person can be asked there. The call goes back
                # to the engine's thread, whose check before submitting it asks and saves
                # the budget decision (or lets it go, the cap raised meanwhile).
                self.requeued[active.key] = self.requeued.get(active.key, 0) + 1
                if self.requeued[active.key] > _REQUEUES:
                    self.park(active.key, exc, budget=True)
                else:
                    active.effect = effect
                continue
            except PhasegateError as exc:
                self.park(active.key, exc)
                continue
            assert effect is not None
            self.item.applied(effect.spec.key if isinstance(effect, Call) else effect.round.key)
            self.advance(active, value)

    def park(self, key: str, exc: BaseException, *, budget: bool = False) -> None:
        """``key`` stopped with an error: the others go on; the error ends the run later.
        ``budget``: it waits on the ``budget`` decision (perhaps asked for another item's
        call): ``status`` shows it answered once that is."""
        from phasegate.engine.nodes.parallel_conflicts import ConflictStopped

        self.active.pop(key, None)
        self.parked[key] = exc
        reason = (str(exc).splitlines() or [exc.__class__.__name__])[0]
        waits = isinstance(exc, (WaitingForHuman, ConflictStopped))
        kind = "waiting" if waits else "failed"
        entry = self.entries()[key]
        entry["parked"] = f"{kind}: {reason}"
        if budget:
            entry["waits_on"] = BUDGET_DECISION
        else:
            entry.pop("waits_on", None)
        self.journal("foreach.item", key=key, status="parked", reason=reason)
        self.save(lazy=True)

    def ended(self, key: str, end: End) -> None:
        self.active.pop(key, None)
        entry = self.entries()[key]
        if end.outcome == DONE and self.git is not None:
            where = self.run.workspaces[self.prefix(key)].workdir
            title = f": {entry.get('title')}" if entry.get("title") else ""
            entry["commit"] = self.git.commit(where, f"{self.item.name} {key}{title}")
        entry["status"] = DONE if end.outcome == DONE else end.outcome
        self.run.workspaces.pop(self.prefix(key), None)
        if end.outcome != DONE:
            self.halted = True
        self.journal("foreach.item", key=key, status=entry["status"], commit=entry.get("commit"))
        self.save(lazy=True)

    def abandon(self) -> None:
        """The run is stopping (Ctrl-C, a stop signal, an error of the engine itself): kill
        every agent's process tree, wait for the workers, journal the calls abandoned."""
        from phasegate.engine.walk import Call

        self.stop.set()
        stop_running_children()
        for active in self.active.values():
            if active.future is None:
                continue
            try:
                active.future.result(timeout=60)
                continue  # it finished: its result is journaled and will be reused
            except BaseException:
                pass
            if isinstance(active.effect, Call):
                self.item.record(
                    "agent.abandoned",
                    key=active.effect.spec.key,
                    role=active.effect.spec.role,
                    node=active.effect.spec.path,
                    reason="phasegate was stopped",
                    sync_now=True,
                )

    def conclude(self) -> str:
        """The loop's outcome once nothing more can run.

        A parked item's error ends the run (the next run resumes it); otherwise
        the first item that ended other than done gives the outcome (what
        finished is merged and landed all the same); otherwise ``done``.
        """
        entries = self.entries()
        parked = [k for k in self.order if k in self.parked]
        if parked:
            raise self.parked[parked[0]]
        ended = [
            str(entries[k]["status"])
            for k in self.order
            if entries[k]["status"] not in (*SETTLED, "pending", "running")
        ]
        stuck = [k for k in self.order if entries[k]["status"] in ("pending", "running")]
        if stuck and not ended:
            raise BlockedError(
                f"{self.item.name}: items {', '.join(stuck)} of {self.path} never became ready "
                "(they depend on items that are not in the list or not done)"
            )
        outcome = ended[0] if ended else DONE
        integrate(self, past_unfinished=outcome != DONE)
        land(self)
        self.journal("fanout.finished", outcome=outcome)
        return outcome


def _fixed(built: tuple[str, tuple[Any, ...]]) -> Callable[[], tuple[str, tuple[Any, ...]]]:
    return lambda: built


def run_parallel(run: Run, path: str, node: ForeachNode, task: Task | None, jobs: int) -> Outcome:
    """Run a parallel foreach's items (called by the foreach handler); the loop's outcome."""
    return FanOut(run, path, node, task, jobs).run_all()
