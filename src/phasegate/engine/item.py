"""A work item: its name, workflow, folder, engine state, view, journal and locks."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import filelock

from phasegate.config import CONFIG_DIR, Config
from phasegate.engine.confine import check_inside
from phasegate.engine.index import record_brief
from phasegate.engine.recorded import RecordedCalls, event_problem, result_key
from phasegate.engine.state import ENGINE_FILE, EngineState
from phasegate.engine.state_archive import ARCHIVE_FILE, append_archive
from phasegate.errors import BadInputError, BusyError, NotFoundError, StateCorruptError
from phasegate.faults import crash_point
from phasegate.redact import Redactor
from phasegate.state.atomic import atomic_write_bytes
from phasegate.state.flock import FileLock, LockTimeout
from phasegate.state.journal import Journal
from phasegate.workflow.loaded import LoadedWorkflow
from phasegate.workflow.model import Workflow

if TYPE_CHECKING:
    from phasegate.engine.plugin_api import StateView

_ALLOWED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")

#: State commits within this many seconds of the last one are coalesced while
#: agents and checks answer faster than this; slower work commits every step.
#: ``PHASEGATE_COALESCE_SECONDS=0`` commits every step.
COALESCE_SECONDS = 0.25
COALESCE_ENV = "PHASEGATE_COALESCE_SECONDS"

#: Receives every journaled event (the CLI turns them into progress lines).
EventSink = Callable[[dict[str, Any]], None]


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


def validate_item_name(name: str) -> str:
    """Return ``name`` if it is a safe work-item name, else raise :class:`BadInputError`."""
    if not name:
        raise BadInputError("work item name is empty")
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise BadInputError(f"work item name {name!r} contains control characters")
    if name.startswith("/") or name.startswith("\\") or re.match(r"^[A-Za-z]:", name):
        raise BadInputError(f"work item name {name!r} is an absolute path; give a plain name")
    if "/" in name or "\\" in name:
        raise BadInputError(f"work item name {name!r} must not contain path separators")
    if ".." in name:
        raise BadInputError(f"work item name {name!r} must not contain '..'")
    if not _ALLOWED_NAME.match(name):
        raise BadInputError(
            f"work item name {name!r} is invalid: use letters, digits, '.', '-' or '_' "
            "(at most 80, starting with a letter or digit)"
        )
    return name


def items_dir(workflow: Workflow, config: Config) -> str:
    """The folder (relative to the repo) holding the workflow's work items."""
    settings = config.workflows.get(workflow.name)
    return settings.items_dir if settings and settings.items_dir else workflow.items_dir


def head_commit(repo: Path) -> str | None:
    """The commit checked out in ``repo``, or ``None`` when it has no commits."""
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "-q", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or None


@dataclass
class WorkItem:
    """Paths and durable storage of one work item."""

    repo: Path
    name: str
    loaded: LoadedWorkflow
    config: Config
    sink: EventSink | None = None
    redactor: Redactor = field(default_factory=Redactor)
    #: Where the item lives when not in the workflow's items folder (an archived change).
    folder: Path | None = None

    def __post_init__(self) -> None:
        validate_item_name(self.name)
        self._lock = FileLock(self.lock_path, timeout=30.0)
        self.journal = Journal(self.item_dir / self.workflow.journal_file, self.redactor)
        self._recorded = RecordedCalls()
        self._last_commit: float | None = None
        self._pending: EngineState | None = None
        # Until work is seen to be fast, every save is committed at once.
        self._fast_work = False
        self._coalesce = coalesce_seconds()
        self._view: StateView | None = None
        #: Results in the journal not yet applied to the state (key -> where they begin):
        #: a commit never moves the state's journal offset past one of them.
        self._unapplied: dict[str, int] = {}
        self._relative: dict[tuple[Path, str | None], str] = {}
        # Parallel items' results are journaled (and held) on worker threads.
        self._unapplied_lock = threading.RLock()
        self._grouped = 0
        #: A resumed run replays the journal's tail: until it does new work, each step is
        #: committed (so a run killed again and again still gets further each time).
        self._replaying = False
        self._view_state: tuple[Path, ...] | None = None
        #: Guards phasegate's files while agents run; told of every state commit.
        self.write_guard: WriteGuard | None = None

    # -- paths ----------------------------------------------------------------------

    @property
    def workflow(self) -> Workflow:
        return self.loaded.workflow

    @cached_property
    def item_dir(self) -> Path:
        if self.folder is not None:
            return self.folder
        return self.repo / items_dir(self.workflow, self.config) / self.name

    @property
    def engine_path(self) -> Path:
        return self.item_dir / ENGINE_FILE

    @property
    def archive_path(self) -> Path:
        """Where the engine state's finished parts are (see engine/state_archive.py)."""
        return self.item_dir / ARCHIVE_FILE

    @cached_property
    def lock_path(self) -> Path:
        return self.repo / CONFIG_DIR / "locks" / f"{self.workflow.name}--{self.name}.lock"

    @cached_property
    def children_dir(self) -> Path:
        """Records of the agent processes a run started (killed by the next run if left)."""
        return self.repo / CONFIG_DIR / "locks" / f"{self.workflow.name}--{self.name}.children"

    @cached_property
    def run_lock_path(self) -> Path:
        return self.repo / CONFIG_DIR / "locks" / f"{self.workflow.name}--{self.name}.run.lock"

    @property
    def view(self) -> StateView:
        if self._view is None:
            from phasegate.engine.plugin_api import load_view

            self._view = load_view(self)
        return self._view

    def moved_to(self, folder: Path) -> None:
        """The item's folder was moved (an archived change): follow it."""
        self.folder = folder
        self.__dict__.pop("item_dir", None)
        self.journal = Journal(folder / self.workflow.journal_file, self.redactor)

    def workdir(self, state: EngineState) -> Path:
        """Where agents work: the item's worktree if it has one, else the repository."""
        if state.worktree:
            return (self.repo / state.worktree).resolve()
        return self.repo

    def relative(self, path: Path, state: EngineState) -> str:
        """``path`` as the agents see it: relative to their working directory if inside it."""
        key = (path, state.worktree)
        known = self._relative.get(key)
        if known is None:  # asked several times a step: path arithmetic is not cheap
            known = self._relative_to_workdir(path, state)
            if len(self._relative) < 1024:
                self._relative[key] = known
        return known

    def _relative_to_workdir(self, path: Path, state: EngineState) -> str:
        base = self.workdir(state)
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
        try:
            return str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            return str(path)

    def exists(self) -> bool:
        """Whether the item has a state: its engine state, or a hand-written view file.

        A view's files lie in the item's folder: without the folder the view (and
        the modules of its plug-in) is not loaded at all.
        """
        if self.engine_path.is_file():
            return True
        return self.item_dir.is_dir() and self.view.adoptable()

    # -- loading --------------------------------------------------------------------

    def load(self, *, read_journal: bool = True) -> EngineState:
        """The engine state, checked against the workflow, its view and the journal's tail.

        Everything is read and checked before anything is written: a corrupt
        state file, view file or journal line stops here with its path.
        """
        check_inside(self.item_dir, self.repo, f"the folder of work item {self.name!r}")
        try:
            raw = self.engine_path.read_bytes()
        except FileNotFoundError:
            adopted = self.view.adopt()
            if adopted is None:
                raise NotFoundError(
                    f"work item {self.name!r} has no state file at {self.engine_path}"
                ) from None
            state = adopted
        except OSError as exc:
            raise StateCorruptError(
                f"state file {self.engine_path} cannot be read: {exc}"
            ) from None
        else:
            state = EngineState.decode(raw, self.engine_path)
        self.check_against_workflow(state)
        self.view.check(state)
        if read_journal:
            self._read_journal(state)
        return state

    def check_against_workflow(self, state: EngineState) -> None:
        """A state naming a mode or node the workflow does not have is corrupt (exit 5)."""
        workflow = self.workflow
        where = f"state file {self.engine_path}"
        if state.mode not in workflow.modes:
            raise StateCorruptError(
                f"{where}: unknown mode {state.mode!r} (modes of {workflow.name}: "
                f"{', '.join(workflow.modes)}); it was left untouched"
            )
        at = state.at
        if at is not None and not at.startswith("@"):
            try:
                workflow.node(at)
            except KeyError:
                raise StateCorruptError(
                    f"{where}: unknown node {at!r} in workflow {workflow.name!r}; "
                    "it was left untouched"
                ) from None

    def _read_journal(self, state: EngineState) -> None:
        recorded = RecordedCalls()
        lines = state.journal_lines
        self.journal.check_before(state.journal_offset, lines)
        self._unapplied = {}
        self._replaying = False
        for number, offset, event in self.journal.tail(state.journal_offset, lines + 1):
            self._replaying = True
            problem = event_problem(event)
            if problem:
                raise StateCorruptError(
                    f"journal {self.journal.path} line {number}: {problem}; it was left untouched"
                )
            recorded.add(event)
            key = result_key(event)
            if key is not None:
                self._unapplied.setdefault(key, offset)
        self._recorded = recorded

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

    def status(self, state: EngineState) -> dict[str, Any]:
        """What ``phasegate status NAME --json`` prints for this item."""
        from phasegate.engine.status import item_status

        data = item_status(self.workflow, state, artifacts=self._artifacts)
        data["stateFile"] = str(self.engine_path)
        data.update(self.view.status_fields(state))
        return data

    def brief(self, state: EngineState) -> dict[str, Any]:
        """The item's brief (``brief(self.status(state))``, from what changed only)."""
        from phasegate.engine.brief import item_brief

        return item_brief(
            self.workflow,
            state,
            artifacts=self._artifacts,
            view_fields=self.view.status_fields(state),
        )

    def _artifacts(self) -> dict[str, bool]:
        return {
            o.file: (self.item_dir / o.file).is_file()
            for _, node in self.workflow.walk()
            for o in getattr(node, "outputs", ())
        }

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
            with open(self.journal.path, "rb") as handle:
                handle.seek(offset)
                lines += handle.read(size - offset).count(b"\n")
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

    def record(self, event: str, *, sync_now: bool = False, **data: Any) -> dict[str, Any]:
        """Append an event to the journal and pass it to the progress sink."""
        written = self.journal.append(event, sync_now=sync_now, item=self.name, **data)
        if self.sink is not None:
            self.sink(written)
        return written

    # -- locks ----------------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the item's write lock (re-entrant within this process)."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except LockTimeout:
            raise BusyError(
                f"work item {self.name!r} is locked by another phasegate process "
                f"(lock {self.lock_path}); try again when it finishes"
            ) from None
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def run_lock(self) -> Iterator[None]:
        """Hold the item for a whole run; a second runner fails fast with BUSY."""
        self.run_lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(str(self.run_lock_path), timeout=0)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise BusyError(
                f"work item {self.name!r} is being run by another phasegate process "
                f"(lock {self.run_lock_path}); wait for it to finish"
            ) from None
        try:
            # An agent of a run killed with SIGKILL may still be writing to the tree:
            # nothing is dispatched until it is gone.
            from phasegate.process_records import AgentGroups, reap_leftover_agents

            killed = reap_leftover_agents(self.children_dir)
            if killed:
                self.record("agents.reaped", pids=killed, sync_now=True)
            with AgentGroups(self.children_dir).recording():
                yield
        finally:
            lock.release()

    def running(self) -> bool:
        """Whether a run holds this item now (its run lock is taken)."""
        self.run_lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(str(self.run_lock_path), timeout=0)
        try:
            lock.acquire()
        except filelock.Timeout:
            return True
        lock.release()
        return False

    def remove_stale_temp_files(self) -> None:
        """Temp files an atomic write left when the process died (we hold the item's lock)."""
        if not self.item_dir.is_dir():
            return
        for stale in self.item_dir.glob(".*.tmp-*"):
            stale.unlink(missing_ok=True)
