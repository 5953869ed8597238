"""How a work item's state is committed: group commit behind the fsync'd journal.

:class:`ItemCommits` is the saving half of :class:`phasegate.engine.item.WorkItem`:
a step's state is committed before the next agent call or check, and while
agents answer fast, once per coalescing window; the journal, fsync'd at every
commit, holds every result meanwhile, and the results journaled but not yet
applied to the state are held so a commit never moves the state's journal
offset past them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from phasegate.engine.index import record_brief
from phasegate.engine.state_archive import append_archive
from phasegate.errors import BadInputError
from phasegate.faults import crash_point
from phasegate.state.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from phasegate.engine.plugin_api import StateView
    from phasegate.engine.recorded import RecordedCalls
    from phasegate.engine.state import EngineState
    from phasegate.redact import Redactor
    from phasegate.state.journal import Journal
    from phasegate.workflow.model import Workflow

#: State commits within this many seconds of the last one are coalesced while
#: agents and checks answer faster than this; slower work commits every step.
#: ``PHASEGATE_COALESCE_SECONDS=0`` commits every step.
COALESCE_SECONDS = 0.25
COALESCE_ENV = "PHASEGATE_COALESCE_SECONDS"


class WriteGuard(Protocol):
    """Told when phasegate commits the item's state files (see engine/protect.py)."""

    def own_writes(self) -> AbstractContextManager[None]:
        """Around one commit of the item's state files."""
        ...


def coalesce_seconds() -> float:
    """The group-commit window (``PHASEGATE_COALESCE_SECONDS`` overrides the default)."""
    raw = os.environ.get(COALESCE_ENV)
    if raw is None:
        return COALESCE_SECONDS
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise BadInputError(f"{COALESCE_ENV}={raw!r} is not a number of seconds") from None


class ItemCommits:
    """Committing a work item's state (mixed into ``WorkItem``, which has the paths)."""

    if TYPE_CHECKING:
        repo: Path
        name: str
        journal: Journal
        redactor: Redactor
        _recorded: RecordedCalls

        @property
        def workflow(self) -> Workflow: ...
        @property
        def item_dir(self) -> Path: ...
        @property
        def engine_path(self) -> Path: ...
        @property
        def view(self) -> StateView: ...
        def locked(self) -> AbstractContextManager[None]: ...
        def brief(self, state: EngineState) -> dict[str, Any]: ...
        def record(self, event: str, *, sync_now: bool = False, **data: Any) -> dict[str, Any]: ...

    def _start_commits(self) -> None:
        self._last_commit: float | None = None
        self._pending: EngineState | None = None
        # Until work is seen to be fast, every save is committed at once.
        self._fast_work = False
        self._coalesce = coalesce_seconds()
        #: Results in the journal not yet applied to the state (key -> where they begin):
        #: a commit never moves the state's journal offset past one of them.
        self._unapplied: dict[str, int] = {}
        # Parallel items' results are journaled (and held) on worker threads.
        self._unapplied_lock = threading.RLock()
        self._grouped = 0
        #: A resumed run replays the journal's tail: until it does new work, each step is
        #: committed (so a run killed again and again still gets further each time).
        self._replaying = False
        self._view_state: tuple[Path, ...] | None = None
        #: Guards phasegate's files while agents run; told of every state commit.
        self.write_guard: WriteGuard | None = None
        self._late: _LateCommit | None = None

    def hold(self, key: str) -> None:
        """The result just journaled under ``key`` is not applied yet (see :meth:`applied`)."""
        with self._unapplied_lock:
            self._unapplied.setdefault(key, self.journal.last_offset)

    def record_result(
        self, event: str, held: str | None, *, sync_now: bool = False, **data: Any
    ) -> dict[str, Any]:
        """Journal a result and hold it (under its key ``held``) as not applied yet, in one
        step: a commit made meanwhile on another thread cannot move the journal offset
        past it."""
        with self._unapplied_lock:
            written = self.record(event, sync_now=sync_now, **data)
            if held is not None:
                self._unapplied.setdefault(held, self.journal.last_offset)
        return written

    def applied(self, key: str) -> None:
        """The result under ``key`` is now part of the state: commits may move past it."""
        with self._unapplied_lock:
            self._unapplied.pop(key, None)

    def recorded(self) -> RecordedCalls:
        """The agent results, check rounds and actions journaled after the last commit."""
        return self._recorded

    # -- saving ---------------------------------------------------------------------

    def save(self, state: EngineState, *, lazy: bool = False, durable: bool = False) -> None:
        """Make ``state`` current: the journal is fsync'd, then the state file is replaced.

        A ``lazy`` save (a step of the walk) is committed with the steps after it,
        before the next agent call or check (:meth:`before_slow_work`; a resumed run
        commits each step until then, as it replays the journal's tail), and while
        agents answer fast only once per coalescing window (group commit): the
        journal, fsync'd at every commit, holds every result, and a resumed run
        replays it (see :mod:`phasegate.engine.recorded`). ``durable`` also fsyncs
        the state file (gates, the end of a run).
        """
        self._raise_late_failure()
        if lazy and not durable:
            if self._grouped:
                self._pending = state  # one commit per round of results (see grouped())
                return
            if self._fast_work:
                last = self._last_commit
                if last is not None and time.monotonic() - last < self._coalesce:
                    self._pending = state  # agents answer fast: group commit
                    return
            elif not self._replaying and self._last_commit is not None:
                # Committed before the next call (before_slow_work). The first step of a
                # run is committed at once: a folder that cannot be written stops the
                # run before anything is journaled.
                self._pending = state
                return
        self.journal.sync()
        self._commit(state, durable=durable)

    def flush(self) -> None:
        """Write a coalesced state commit now, if one is waiting."""
        self._raise_late_failure()
        if self._pending is not None:
            self.journal.sync()
            self._commit(self._pending, durable=True)

    def flush_if_due(self) -> None:
        """Inside :meth:`grouped`: write the waiting commit if the last one is older than
        the coalescing window (so the state file never lags the journal for long)."""
        last = self._last_commit
        if last is None or time.monotonic() - last >= self._coalesce:
            self.flush()

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """Inside, lazy saves wait for :meth:`flush` (a parallel foreach flushes once per
        round of results): the journal, the write-ahead log, has every result meanwhile."""
        self._grouped += 1
        try:
            yield
        finally:
            self._grouped -= 1

    def _commit(self, state: EngineState, *, durable: bool) -> None:
        from phasegate.state.journal import utc_now

        state["updated"] = utc_now()
        self._journal_position(state)
        self.view.prepare(state)
        state["brief"] = self.brief(state)
        plan = state.settle(self.redactor)
        guard = self.write_guard
        with guard.own_writes() if guard is not None else nullcontext():
            with self.locked():
                if plan.payload:
                    size = append_archive(self.engine_path, state.archive_bytes, plan.payload)
                    crash_point("state.after_archive")
                else:
                    size = state.archive_bytes
                state.settled(plan, size)
                payload = state.encode(self.redactor)
                crash_point("state.before_commit")
                atomic_write_bytes(self.engine_path, payload, durable=durable)
            crash_point("state.after_commit")
            self._last_commit = time.monotonic()
            self._pending = None
            self.view.render(state)
            record_brief(
                self.repo,
                self.workflow.name,
                self.name,
                self.engine_path,
                state["brief"],
                self._view_state_file(),
                redactor=self.redactor,
            )

    def _view_state_file(self) -> Path | None:
        """The state file the item's view writes (``.meta.json``), if it writes one."""
        if self._view_state is None:
            from phasegate.engine.plugin_api import view_files

            names = view_files(self.workflow)
            self._view_state = (self.item_dir / names[0],) if names else ()
        return self._view_state[0] if self._view_state else None

    def _journal_position(self, state: EngineState) -> None:
        with self._unapplied_lock:
            # Read together: a result journaled on a worker thread is held in the same step.
            size = self.journal.size()
            held = list(self._unapplied.values())
        if held:
            # A result journaled but not applied must be found again after a crash.
            size = min(size, *held)
        offset = state.journal_offset
        if size == offset:
            return
        lines = state.journal_lines
        if size > offset:
            # One positioned read (no buffered file object: a commit happens at every step).
            fd = os.open(self.journal.path, os.O_RDONLY)
            try:
                while offset < size:
                    chunk = os.pread(fd, size - offset, offset)
                    if not chunk:
                        break  # shorter now (cut meanwhile): what was there is counted
                    lines += chunk.count(b"\n")
                    offset += len(chunk)
            finally:
                os.close(fd)
        state.set_journal_position(size, lines)

    def before_slow_work(self) -> None:
        """Before an agent call or a check: commit the steps since the last commit, unless
        the work has been fast (then commits are grouped: see :meth:`save`).

        The state file then shows where the item stands while the agent works: one
        commit per agent call, whatever number of steps led to it.
        """
        self._replaying = False
        if self._pending is not None and not self._fast_work:
            self.journal.sync()
            self._commit(self._pending, durable=False)

    def slow_work_done(self, seconds: float) -> None:
        """Remember how long the last agent call or check took (see :meth:`save`)."""
        self._fast_work = seconds < self._coalesce

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Around an agent call or check the engine's thread waits on (its dispatch record
        included): a commit that group commit held back is written once the work has
        outlasted the coalescing window, so that after fast steps too the state files show
        where the item stands while slow work runs.

        The late commit is written on another thread while this one waits; it keeps the
        journal position before the work's own records (as :meth:`before_slow_work`
        does), and the waiting thread goes on only once it is written. A commit that
        fails there (a full disk) is raised by the next save, after the work's result is
        journaled.
        """
        if self._pending is None or self._grouped:
            yield
            return
        with self._unapplied_lock:
            self._unapplied.setdefault(_WAITING, self.journal.size())
        late = self._late
        if late is None:
            late = self._late = _LateCommit(self)
        late.arm(time.monotonic() + self._coalesce)
        try:
            yield
        finally:
            late.disarm()
            self.applied(_WAITING)

    def _raise_late_failure(self) -> None:
        late = self._late
        if late is not None and late.failure is not None:
            failure, late.failure = late.failure, None
            raise failure


#: The hold (see :meth:`ItemCommits.hold`) on the journal position while work is waited on.
_WAITING = "waiting:engine"


class _LateCommit:
    """A thread that writes an item's held-back commit once the work the engine's thread
    waits on outlasts its deadline (see :meth:`ItemCommits.waiting`)."""

    def __init__(self, commits: ItemCommits) -> None:
        self._commits = commits
        self._cond = threading.Condition()
        self._deadline: float | None = None
        #: The deadline the thread's timed wait ends at (None: it waits until notified).
        self._sleeping_until: float | None = None
        self._busy = False
        self.failure: Exception | None = None
        threading.Thread(target=self._loop, name="phasegate-late-commit", daemon=True).start()

    def arm(self, deadline: float) -> None:
        with self._cond:
            self._deadline = deadline
            sleeping_until = self._sleeping_until
            # A thread already waiting until an earlier deadline wakes then and waits on
            # for the rest: woken only when it would otherwise wake too late.
            if sleeping_until is None or deadline < sleeping_until:
                self._cond.notify()

    def disarm(self) -> None:
        """No late commit from now on; one being written is waited for."""
        with self._cond:
            self._deadline = None
            while self._busy:
                self._cond.wait()

    def _loop(self) -> None:
        with self._cond:
            while True:
                if self._deadline is None:
                    self._sleeping_until = None
                    self._cond.wait()
                    continue
                remaining = self._deadline - time.monotonic()
                if remaining > 0:
                    self._sleeping_until = self._deadline
                    self._cond.wait(remaining)
                    continue
                self._deadline = None
                self._busy = True
                self._cond.release()
                try:
                    self._commits.flush()
                except Exception as exc:  # the engine's thread raises it (see waiting())
                    self.failure = exc
                finally:
                    self._cond.acquire()
                    self._busy = False
                    self._cond.notify_all()
