"""A work item: its name, workflow, folder, engine state, view, journal and locks
(how its state is committed is in :mod:`phasegate.engine.item_commits`)."""

from __future__ import annotations

import os
import re
import subprocess
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.config import CONFIG_DIR, Config
from phasegate.engine.confine import check_folder_possible, check_inside
from phasegate.engine.item_commits import ItemCommits
from phasegate.engine.recorded import RecordedCalls, event_problem, result_key
from phasegate.engine.state import ENGINE_FILE, EngineState
from phasegate.engine.state_archive import ARCHIVE_FILE
from phasegate.errors import (
    BadInputError,
    BusyError,
    ItemRunningError,
    NotFoundError,
    StateCorruptError,
    os_reason,
)
from phasegate.redact import Redactor, spare_in_messages
from phasegate.state.flock import FileLock, LockTimeout
from phasegate.state.journal import Journal
from phasegate.workflow.loaded import LoadedWorkflow
from phasegate.workflow.model import Workflow

if TYPE_CHECKING:
    from phasegate.engine.plugin_api import StateView

_ALLOWED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")

#: Receives every journaled event (the CLI turns them into progress lines).
EventSink = Callable[[dict[str, Any]], None]

#: Words the engine writes as statuses and stages of every workflow's items.
_STATUS_WORDS = ("completed", "running", "blocked", "stopped", "waiting", "pending", "done")
#: The identifiers of the workflows seen (a workflow object is never changed).
_identifiers: dict[int, tuple[Workflow, frozenset[str]]] = {}


def workflow_identifiers(workflow: Workflow) -> frozenset[str]:
    """The names phasegate writes for ``workflow`` in state and journal: its name, modes,
    roles, labels, commands, node ids, outcome names, decision ids and choices."""
    known = _identifiers.get(id(workflow))
    if known is not None and known[0] is workflow:
        return known[1]
    from phasegate.workflow.model import AgentNode, EndNode, GateNode

    names: set[str] = {workflow.name, *_STATUS_WORDS}
    names.update(workflow.modes, workflow.roles, workflow.labels, workflow.commands)
    for path, node in workflow.walk():
        names.update((path, node.id, *node.on, *node.on.values()))
        if node.label:
            names.add(node.label)
        if isinstance(node, AgentNode):
            for reviewer in node.reviewers:
                names.update((*reviewer.on, *reviewer.on.values()))
                names.update(n for n in (reviewer.name, reviewer.role) if n)
        elif isinstance(node, GateNode):
            names.update(node.choices)
            if node.decision:
                names.add(node.decision)
        elif isinstance(node, EndNode):
            names.update((node.outcome, node.status))
    found = frozenset(names)
    if len(_identifiers) < 256:
        _identifiers[id(workflow)] = (workflow, found)
    return found


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
            f"work item name {name!r} is invalid: use ASCII letters, digits, '.', '-' or '_' "
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
class WorkItem(ItemCommits):
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
        # The item's own identifiers are written as they are, never as [REDACTED].
        if self.redactor.values:
            identifiers = workflow_identifiers(self.workflow)
            self.redactor = self.redactor.sparing((*identifiers, self.name))
            spare_in_messages((*identifiers, self.name))
        self._lock = FileLock(self.lock_path, timeout=30.0)
        self.journal = Journal(self.item_dir / self.workflow.journal_file, self.redactor)
        self._recorded = RecordedCalls()
        self._view: StateView | None = None
        self._relative: dict[tuple[Path, str | None], str] = {}
        self._start_commits()

    # -- paths ----------------------------------------------------------------------

    @property
    def workflow(self) -> Workflow:
        return self.loaded.workflow

    @cached_property
    def item_dir(self) -> Path:
        if self.folder is not None:
            return self.folder
        return self.repo / items_dir(self.workflow, self.config) / self.name

    @cached_property
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
        self.__dict__.pop("engine_path", None)
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
        if os.path.lexists(self.engine_path):  # a folder there is named when it is read
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
                f"state file {self.engine_path} cannot be read: {os_reason(exc)}"
            ) from None
        else:
            state = EngineState.decode(raw, self.engine_path)
            self.check_name(state)
        self.check_against_workflow(state)
        self.view.check(state)
        if read_journal:
            self._read_journal(state)
        return state

    def check_name(self, state: EngineState) -> None:
        """The state must be this item's: a folder renamed or copied by hand holds another
        item's state, whose name is also in its journal, branch, refs and the item index,
        so it is not run or shown under the folder's name (exit 5, nothing written)."""
        if state.item != self.name:
            raise self.held_by_other(state.item, ENGINE_FILE)

    def held_by_other(self, recorded: str, told_by: str) -> StateCorruptError:
        """The error for this item's folder holding work item ``recorded`` (its file
        ``told_by`` says so): renamed or copied by hand (the fix named), or edited."""
        folder = self._shown(self.item_dir)
        where = f"folder {folder} holds work item {recorded!r} (its {told_by} says so)"
        if self.folder is not None:
            return StateCorruptError(f"{where}, not {self.name!r}; it was left untouched")
        try:
            validate_item_name(recorded)
        except BadInputError:
            edited = "the state file" if told_by == ENGINE_FILE else f"its {told_by}"
            return StateCorruptError(
                f"{where}, not {self.name!r}: {edited} was edited; restore it "
                "(e.g. from git); it was left untouched"
            )
        home = self.item_dir.parent / recorded
        fix = f"rename the folder back to {self._shown(home)}"
        if home.exists():
            fix = (
                f"{self._shown(home)} exists too: delete {folder} if it is a copy (a new item "
                f"is made with phasegate new), else move {self._shown(home)} away and {fix}"
            )
        return StateCorruptError(
            f"{where}, not {self.name!r}: it was renamed or copied, and an item's name is "
            f"also in its journal, branch and refs; {fix}; it was left untouched"
        )

    def _shown(self, path: Path) -> str:
        """``path`` relative to the repository when inside it (for messages)."""
        try:
            return path.relative_to(self.repo).as_posix()
        except ValueError:
            return str(path)

    def check_against_workflow(self, state: EngineState) -> None:
        """A state naming a mode or node the workflow does not have is corrupt (exit 5)."""
        workflow = self.workflow
        where = f"state file {self.engine_path}"
        # Either the state was edited, or the workflow file changed since the item got here
        # (a node renamed, a mode removed): the message says both, and where the workflow is.
        changed = f"the workflow ({self.loaded.path}) changed since, or the state was edited"
        if state.mode not in workflow.modes:
            raise StateCorruptError(
                f"{where}: unknown mode {state.mode!r} (modes of {workflow.name}: "
                f"{', '.join(workflow.modes)}): {changed}; it was left untouched"
            )
        at = state.at
        if at is not None and not at.startswith("@"):
            try:
                workflow.node(at)
            except KeyError:
                nodes = ", ".join(n.id for n in workflow.nodes)
                raise StateCorruptError(
                    f"{where}: unknown node {at!r} in workflow {workflow.name!r} (its nodes: "
                    f"{nodes}): the item is at a node the workflow no longer has: {changed}; "
                    f"it was left untouched (put node {at!r} back in the workflow to go on)"
                ) from None
        self._check_loop_cursors(state, where, changed)

    def _check_loop_cursors(self, state: EngineState, where: str, changed: str) -> None:
        """An item of a foreach still under way is at a node of the loop's body."""
        for path in state.paths():
            found = state.peek(path)
            items = found.get("items") if found is not None else None
            if not isinstance(items, dict):
                continue
            # Imported here: the walk brings the backends, which ``status`` does not load.
            from phasegate.engine.walk import definition_path

            try:
                loop = self.workflow.node(definition_path(path))
            except KeyError:
                continue  # a loop the workflow no longer has is said where the item is at it
            body = getattr(loop, "body", None)
            if body is None:
                continue
            ids = [n.id for n in body]
            for key, record in items.items():
                at = record.get("at") if isinstance(record, dict) else None
                if record.get("status") != "running" or not isinstance(at, str) or at in ids:
                    continue
                raise StateCorruptError(
                    f"{where}: unknown node {at!r} in the body of foreach {loop.id!r} of "
                    f"workflow {self.workflow.name!r} (its nodes: {', '.join(ids)}): item "
                    f"{key} of the loop is at a node the workflow no longer has: {changed}; "
                    f"it was left untouched (put node {at!r} back in the workflow to go on)"
                )

    def _read_journal(self, state: EngineState) -> None:
        recorded = RecordedCalls()
        lines = state.journal_lines
        self.journal.check_before(state.journal_offset, lines)
        self._unapplied = {}
        self._replaying = False
        # The decisions asked: in the state, or asked in the tail. An answer to a decision
        # asked neither way is no one's (an agent wrote it, and its run was killed before
        # the line was cut out): it answers nothing.
        asked = {(str(d.get("id")), d.get("visit")) for d in state.decisions.values()}
        for number, offset, event in self.journal.tail(state.journal_offset, lines + 1):
            self._replaying = True
            problem = event_problem(event)
            if problem:
                raise StateCorruptError(
                    f"journal {self.journal.path} line {number}: {problem}; it was left untouched"
                )
            name, decision = event.get("event"), (str(event.get("id")), event.get("visit"))
            if name == "decision.needed":
                asked.add(decision)
            elif name == "decision.answered" and decision not in asked:
                continue
            recorded.add(event)
            key = result_key(event)
            if key is not None:
                self._unapplied.setdefault(key, offset)
        self._recorded = recorded

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
            o.file: has_content(self.item_dir / o.file)
            for _, node in self.workflow.walk()
            for o in getattr(node, "outputs", ())
        }

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
        if not os.path.isdir(os.path.dirname(self._lock.path)):  # one stat when it is there
            self._make_locks_folder()
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
        import filelock  # only a run or a check of one takes the run lock

        self._make_locks_folder()
        lock = filelock.FileLock(str(self.run_lock_path), timeout=0)
        try:
            lock.acquire()
        except filelock.Timeout:
            from phasegate.engine.live_run import live_path, read_live, watch_command

            other = read_live(live_path(self.run_lock_path))
            pid = f"pid {other['pid']}, " if other else ""
            raise ItemRunningError(
                f"work item {self.name!r} is being run by another phasegate process "
                f"({pid}lock {self.run_lock_path}); wait for it to finish (follow it with "
                f"{watch_command(self.name)})"
            ) from None
        live: Path | None = None
        try:
            from phasegate.engine.live_run import remove_live, write_live

            # What `status` reads to tell that this run is going on (without the lock).
            live = write_live(self.run_lock_path, self.workflow.name, self.name)
            # An agent of a run killed with SIGKILL may still be writing to the tree:
            # nothing is dispatched until it is gone.
            from phasegate.process_records import AgentGroups, reap_leftover_agents

            killed = reap_leftover_agents(self.children_dir)
            if killed:
                self.record("agents.reaped", pids=killed, sync_now=True)
            # What an agent changed of guarded files before it (or someone) killed that run.
            from phasegate.engine.protect_pending import put_back_pending

            put_back_pending(self)
            with AgentGroups(self.children_dir).recording():
                yield
        finally:
            # The guard's record of calls on disk goes with the run (see protect_pending).
            close_guard = getattr(self.write_guard, "close", None)
            if close_guard is not None:
                close_guard()
            if live is not None:
                remove_live(live)
            # The journal's file, kept open between appends, is closed with the run.
            self.journal.close()
            lock.release()

    def _make_locks_folder(self) -> None:
        """Make ``.phasegate/locks``; a file in its way is BadInputError naming it."""
        folder = self.lock_path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            check_folder_possible(folder, self.repo, f"work on item {self.name!r}")
            raise

    def running(self) -> bool:
        """Whether a run holds this item now (its run lock is taken)."""
        import filelock

        self._make_locks_folder()
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


def has_content(path: Path) -> bool:
    """Whether ``path`` is a file holding more than blank space: an empty (or blank)
    artifact is as missing as no file, for a prerequisite (seed 000: no implement
    without spec.md)."""
    try:
        if not path.is_file():  # a folder or a fifo is no artifact (and is never opened)
            return False
        with open(path, "rb") as handle:
            return bool(handle.read(64 * 1024).strip())
    except OSError:
        return False
