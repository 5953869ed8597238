"""A work item: its name, workflow, folder, state file, journal and locks."""

from __future__ import annotations

import os
import re
import subprocess
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import filelock

from phasegate.config import CONFIG_DIR, Config
from phasegate.engine.history import sync_history
from phasegate.engine.recorded import RecordedCalls
from phasegate.engine.worktree import add_worktree
from phasegate.errors import BadInputError, BusyError, NotFoundError, WorkflowError
from phasegate.redact import Redactor
from phasegate.state.item import ItemState, IterationRecord
from phasegate.state.journal import Journal, utc_now
from phasegate.state.store import StateStore
from phasegate.workflow.loader import LoadedWorkflow
from phasegate.workflow.model import Workflow
from phasegate.workflow.registry import WorkflowRegistry

_ALLOWED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")

#: State commits within this many seconds of the last one are coalesced while
#: agents and checks answer faster than this; slower work commits every step.
#: ``PHASEGATE_COALESCE_SECONDS=0`` commits every step.
COALESCE_SECONDS = 0.25
COALESCE_ENV = "PHASEGATE_COALESCE_SECONDS"


def coalesce_seconds() -> float:
    """The group-commit window (``PHASEGATE_COALESCE_SECONDS`` overrides the default)."""
    raw = os.environ.get(COALESCE_ENV)
    if raw is None:
        return COALESCE_SECONDS
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise BadInputError(f"{COALESCE_ENV}={raw!r} is not a number of seconds") from None


#: Receives every journaled event (the CLI turns them into progress lines).
EventSink = Callable[[dict[str, Any]], None]


class Placed(Protocol):
    """What paths and diffs need from an item's state (any workflow's state model)."""

    @property
    def worktree(self) -> str | None: ...

    @property
    def base_commit(self) -> str | None: ...


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


@dataclass
class WorkItem:
    """Paths and durable storage of one work item."""

    repo: Path
    name: str
    loaded: LoadedWorkflow
    config: Config
    sink: EventSink | None = None
    redactor: Redactor = field(default_factory=Redactor)

    def __post_init__(self) -> None:
        validate_item_name(self.name)
        self.store = StateStore(
            self.state_path, self.lock_path, self.workflow.state_format, self.redactor
        )
        self.journal = Journal(self.item_dir / self.workflow.journal_file, self.redactor)
        self._history_records: int | None = None
        self._recorded: RecordedCalls | None = None
        self._last_commit: float | None = None
        self._unwritten: tuple[dict[str, Any], str, list[IterationRecord]] | None = None
        # Until work is seen to be fast, every save is committed at once.
        self._fast_work = False
        self._coalesce = coalesce_seconds()

    @property
    def workflow(self) -> Workflow:
        return self.loaded.workflow

    @cached_property
    def item_dir(self) -> Path:
        return self.repo / items_dir(self.workflow, self.config) / self.name

    @cached_property
    def state_path(self) -> Path:
        return self.item_dir / self.workflow.state_file

    @cached_property
    def history_path(self) -> Path:
        return self.item_dir / self.workflow.history_file

    @cached_property
    def lock_path(self) -> Path:
        return self.repo / CONFIG_DIR / "locks" / f"{self.workflow.name}--{self.name}.lock"

    @cached_property
    def run_lock_path(self) -> Path:
        return self.repo / CONFIG_DIR / "locks" / f"{self.workflow.name}--{self.name}.run.lock"

    def workdir(self, state: Placed) -> Path:
        """Where agents work: the item's worktree if it has one, else the repository."""
        if state.worktree:
            return (self.repo / state.worktree).resolve()
        return self.repo

    def artifact_path(self, name: str) -> Path:
        return self.item_dir / name

    def relative(self, path: Path, state: Placed) -> str:
        """``path`` as the agents see it: relative to their working directory if inside it."""
        base = self.workdir(state)
        try:
            return str(path.relative_to(base))  # the usual case, without touching the disk
        except ValueError:
            pass
        try:
            return str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            return str(path)

    def load(self) -> ItemState:
        if not self.state_path.exists():
            raise NotFoundError(f"work item {self.name!r} has no state file at {self.state_path}")
        return ItemState.from_document(self.store.load(), self.state_path)

    def save(self, state: ItemState, *, lazy: bool = False) -> None:
        """Make ``state`` durable: the journal is fsync'd, then the state file is committed.

        With ``lazy`` the state file commit may be coalesced with later ones
        while agents answer fast (group commit): the journal, fsync'd here,
        already holds every result, and a resumed run replays it (see
        :mod:`phasegate.engine.recorded`). A snapshot is kept, so what a later
        commit writes is always a consistent state.
        """
        self.journal.sync()
        if (
            lazy
            and self._fast_work
            and self._last_commit is not None
            and time.monotonic() - self._last_commit < self._coalesce
        ):
            self._unwritten = (state.to_document(), state.status, list(state.engine.iterations))
            return
        self._commit(state.to_document(), state.status, state.engine.iterations)

    def flush(self) -> None:
        """Write a coalesced state commit now, if one is waiting."""
        if self._unwritten is not None:
            self._commit(*self._unwritten)

    def _commit(
        self, document: dict[str, Any], status: str, iterations: list[IterationRecord]
    ) -> None:
        self.store.commit(document)
        self._last_commit = time.monotonic()
        self._unwritten = None
        if status == "active" and len(iterations) != self._history_records:
            sync_history(self.history_path, self.name, iterations, self.redactor)
            self._history_records = len(iterations)

    def before_slow_work(self) -> None:
        """Before an agent call or a check: commit now unless the work has been fast."""
        if not self._fast_work:
            self.flush()

    def slow_work_done(self, seconds: float) -> None:
        """Remember how long the last agent call or check took (see :meth:`save`)."""
        self._fast_work = seconds < self._coalesce

    def recorded(self) -> RecordedCalls:
        """The index of agent results and check rounds in the journal (built once)."""
        if self._recorded is None:
            self._recorded = RecordedCalls(self.journal.events())
        return self._recorded

    def record(self, event: str, *, sync_now: bool = False, **data: Any) -> dict[str, Any]:
        """Append an event to the journal and pass it to the progress sink.

        Events reach the OS at once (safe against a killed process) and are
        fsync'd before the next state commit; ``sync_now`` fsyncs at once.
        """
        written = self.journal.append(event, sync_now=sync_now, item=self.name, **data)
        if self.sink is not None:
            self.sink(written)
        return written

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
            # Holding the write lock for the whole run makes each commit's
            # locking a re-entrant no-op instead of a file-lock round trip.
            with self.store.locked():
                yield
        finally:
            lock.release()


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


def create_item(
    repo: Path,
    name: str,
    loaded: LoadedWorkflow,
    config: Config,
    *,
    mode: str | None,
    description: str,
    worktree: bool = False,
) -> WorkItem:
    """Create the folder and first state of a new work item.

    With ``worktree`` the item also gets its own git worktree and branch, where
    its agents will work.
    """
    validate_item_name(name)
    workflow = loaded.workflow
    _refuse_own_commands(workflow, name)
    mode = mode or workflow.default_mode
    if mode not in workflow.modes:
        raise BadInputError(
            f"unknown mode {mode!r} for workflow {workflow.name!r} "
            f"(modes: {', '.join(workflow.modes)})"
        )
    item = WorkItem(repo, name, loaded, config)
    with item.store.locked():
        if item.state_path.exists():
            raise BadInputError(
                f"work item {name!r} already exists at {item.item_dir}; "
                f"continue it with 'phasegate run {name}'"
            )
        state = ItemState(
            id=name,
            workflow=workflow.name,
            description=description,
            mode=mode,
            created=utc_now(),
            base_commit=head_commit(repo),
        )
        if worktree:
            state.worktree, state.branch = add_worktree(repo, name)
        item.record("item.created", workflow=workflow.name, mode=mode, description=description)
        item.save(state)
    return item


def iter_items(
    repo: Path, registry: WorkflowRegistry, config: Config
) -> Iterator[tuple[str, str, Path]]:
    """Yield ``(workflow, item name, state file)`` for every work item in the repo."""
    seen: set[Path] = set()
    for workflow_name in registry.names():
        try:
            workflow = registry.get(workflow_name).workflow
        except WorkflowError:
            continue
        if workflow.commands:
            continue  # its own commands list its items; their state is not an ItemState
        root = repo / items_dir(workflow, config)
        for state_file in sorted(root.glob(f"*/{workflow.state_file}")):
            if state_file in seen:
                continue
            seen.add(state_file)
            yield workflow_name, state_file.parent.name, state_file


def locate_item(
    repo: Path, name: str, registry: WorkflowRegistry, config: Config, workflow: str | None = None
) -> WorkItem:
    """Find work item ``name`` (in ``workflow`` if given) and return its handle."""
    validate_item_name(name)
    names = [workflow] if workflow else registry.names()
    matches: list[LoadedWorkflow] = []
    broken: list[WorkflowError] = []
    for workflow_name in names:
        try:
            loaded = registry.get(workflow_name)
        except WorkflowError as exc:
            broken.append(exc)
            continue
        state_file = repo / items_dir(loaded.workflow, config) / name / loaded.workflow.state_file
        if state_file.exists():
            matches.append(loaded)
    if len(matches) > 1:
        raise BadInputError(
            f"work item {name!r} exists in several workflows "
            f"({', '.join(m.name for m in matches)}); pick one with --workflow"
        )
    if matches:
        _refuse_own_commands(matches[0].workflow, name)
        return WorkItem(repo, name, matches[0], config)
    if broken:
        raise broken[0]
    raise NotFoundError(
        f"no work item named {name!r} in {repo}; create it with 'phasegate new {name}'"
    )


def _refuse_own_commands(workflow: Workflow, name: str) -> None:
    """Items of a workflow run by its own commands are not created or run generically."""
    if workflow.commands:
        commands = ", ".join(f"phasegate {c}" for c in workflow.commands)
        raise BadInputError(
            f"{name!r} belongs to workflow {workflow.name!r}, whose items are created and run "
            f"with its own commands ({commands}); see phasegate --help"
        )
