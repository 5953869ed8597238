"""Agents cannot change phasegate's own files.

While agent calls of a work item run, the content of phasegate's own files is
kept on record: the repository's ``.phasegate/`` folder (config, workflows,
prompts, the scripted agents' script; not its ``locks/``, ``cache/`` or item
``worktrees/``, nor files a backend declares as its own log) and the work
item's state files (the engine's state, the files its view writes such as
``.meta.json``, ``.review-history.md`` or ``STATE.yaml``, and the journal), and
what makes git run commands: the repository's ``.git/config`` and ``.git/hooks/``.
Whatever differs from that record is put back (``.phasegate/`` replaced by a link
or a file is made a folder again): changed files get their old
bytes, new files are removed, removed ones come back, and journal lines that
phasegate did not write (forged events) are cut out. The change is journaled
as ``agent.violation`` with the paths, and the call counts as failed (retried
like any failed call) or, with ``protection: {on_violation: stop}`` in the
config, stops the run. A workflow's view may guard more of its files from some
roles (:meth:`~phasegate.engine.plugin_api.StateView.watch_call`) or nodes
(:meth:`~phasegate.engine.plugin_api.StateView.watch_node`: the ``feature`` view keeps
each phase's artifact from the other phases it is given to): what it puts back after
such a call is a violation the same way.

phasegate's own writes are never a violation: the record is taken after the
call's dispatch is journaled, every line phasegate appends to the journal
(from any thread) is added to it as it is written, and the state files
phasegate commits while calls run (a parallel foreach commits while worker
threads run agents) are recorded again right after each commit. Calls that
overlap (parallel items) share one record; a change found while several run
is reported by each of them, since it cannot be told which agent made it.
Changes are looked for when a call begins or ends and before each state commit;
an interrupted call (Ctrl-C, a stop signal) has its changes undone too. The record is
also on disk while calls run (outside every work tree, beyond the agents' reach), so
what an agent changed before phasegate was killed is put back by the item's next run
(:mod:`phasegate.engine.protect_pending`); phasegate's own state writes are marked in it
first, so a run killed while it wrote them keeps what it wrote.

A call that works in a git worktree (an item of a parallel foreach, or the repair
of a merge conflict) has that worktree's ``.phasegate/`` checked the same way:
what the agent changed there is put back and reported as a violation, exactly as
in the work tree.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from phasegate.agents.base import AgentResult
from phasegate.engine.item import WorkItem
from phasegate.engine.protect_cache import ABSENT, _Copy
from phasegate.engine.protect_outputs import GitFacts, OutputsRecord, outside_words
from phasegate.engine.protect_pending import PendingRecord
from phasegate.engine.protect_snapshot import (
    ReadCache,
    Snapshot,
    event_names,
    item_file_paths,
    put_back,
)
from phasegate.engine.protect_walk import UNPROTECTED_DIRS
from phasegate.errors import AgentError
from phasegate.repo_paths import CACHE_DIR, CONFIG_DIR

#: How many forged journal lines a violation event quotes.
QUOTED_LINES = 5


class ProtectedFilesChanged(AgentError):
    """An agent changed phasegate's own files and the config says to stop the run."""


@dataclass(frozen=True)
class Violation:
    """What an agent changed of phasegate's files during one call (all of it put back)."""

    paths: tuple[str, ...]
    forged: tuple[str, ...]
    #: What a workflow's view keeps from the role, each in words naming its file.
    kept: tuple[str, ...] = ()

    def describe(self, role: str) -> str:
        forged = f" and {len(self.forged)} forged journal line(s) removed" if self.forged else ""
        if not self.kept:
            return (
                f"{role} changed {whose(self.paths)} during its call ({', '.join(self.paths)}); "
                f"they were put back as they were{forged}"
            )
        return f"{role} changed {changed_words(self.paths, self.kept)}, during its call; " + (
            f"they were put back as they were{forged}"
        )


def whose(paths: Iterable[str]) -> str:
    """What the protected ``paths`` are, in words: git's (``.git/config``, a hook) when all
    of them are, else phasegate's own files."""
    shown = list(paths)
    if shown and all(p.startswith(".git/") or "/.git/" in p for p in shown):
        return "git's config or hooks"
    return "phasegate's own files"


def changed_words(paths: Iterable[str], kept: Iterable[str]) -> str:
    """What a call changed, in words: phasegate's own files, then what a view keeps."""
    parts = list(kept)
    shown = list(paths)
    if shown:
        parts.insert(0, f"phasegate's own files ({', '.join(shown)})")
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])}, and {parts[-1]}"


def _merged(found: list[Violation]) -> Violation | None:
    if not found:
        return None
    paths = tuple(dict.fromkeys(p for v in found for p in v.paths))
    kept = tuple(dict.fromkeys(k for v in found for k in v.kept))
    return Violation(paths, tuple(line for v in found for line in v.forged), kept)


def undo_changes(item: WorkItem, snapshot: Snapshot) -> Violation | None:
    """Put back what differs from ``snapshot``; what it was, or ``None``."""
    changed = snapshot.changed_files()
    snapshot.restore(changed)
    journal, forged = snapshot.settle_journal()
    if not changed and not journal:
        return None
    shown = [_shown(item.repo, p) for p in changed]
    if journal:
        shown.append(_shown(item.repo, snapshot.journal or item.journal.path))
    return Violation(tuple(shown), tuple(forged))


class Guard:
    """The record of one work item's protected files while any of its agent calls runs."""

    def __init__(self, item: WorkItem) -> None:
        self.item = item
        self._lock = threading.RLock()
        self._snapshot: Snapshot | None = None
        #: Per running call: the violations found while it ran.
        self._running: dict[int, list[Violation]] = {}
        self._next = 0
        #: Files as last read, from one call's record to the next.
        self._cache = ReadCache()
        #: What git said of the work trees calls work in (for calls confined to outputs).
        self.git = GitFacts()
        #: The record on disk while calls run (put back by the next run if this one is killed).
        self._pending = PendingRecord(item)
        #: Per running call: the files its view keeps from it, as they were when it began.
        self._extra: dict[int, Mapping[str, _Copy]] = {}

    def _write_pending(self) -> None:
        assert self._snapshot is not None
        extra: dict[str, _Copy] = {}
        for files in self._extra.values():
            for path, copy in files.items():
                extra.setdefault(path, copy)
        self._pending.write(self._snapshot, extra)

    def _sweep(self) -> None:
        """Undo whatever differs from the record; each running call is told."""
        assert self._snapshot is not None
        found = undo_changes(self.item, self._snapshot)
        if found is not None:
            for violations in self._running.values():
                violations.append(found)

    def _own_append(self, line: bytes) -> None:
        with self._lock:
            if self._snapshot is not None and self._snapshot.journal == self.item.journal.path:
                self._snapshot.own_append(line)
                self._pending.own(line)

    @contextlib.contextmanager
    def watching(
        self, exempt: Iterable[Path] = (), kept: Mapping[str, _Copy] | None = None
    ) -> Iterator[list[Violation]]:
        """While one agent call runs: the violations found meanwhile (filled when it ends).
        ``kept``: the files the call's view keeps from it, as they are now (written to the
        record on disk with phasegate's own files, see :mod:`.protect_pending`)."""
        # The journal's lock first: phasegate's own appends (which tell this guard) hold it.
        with self.item.journal.lock, self._lock:
            if self._snapshot is None:
                self._snapshot = Snapshot.take(self.item, exempt, self._cache)
                self.item.journal.observer = self._own_append
            else:
                self._sweep()
                self._snapshot.exempt_too(exempt)
            token, self._next = self._next, self._next + 1
            found: list[Violation] = []
            self._running[token] = found
            if kept:
                self._extra[token] = kept
            self._write_pending()
        try:
            yield found
        finally:
            with self.item.journal.lock, self._lock:
                try:
                    self._sweep()
                finally:
                    del self._running[token]
                    self._extra.pop(token, None)
                    if not self._running:
                        self._snapshot = None
                        self.item.journal.observer = None
                        self._pending.ended()
                    else:
                        self._write_pending()

    @contextlib.contextmanager
    def own_writes(self) -> Iterator[None]:
        """Around phasegate's commit of the item's state files: changes made before it are
        undone first, and what it writes is recorded as phasegate's own."""
        with self.item.journal.lock, self._lock:
            if self._snapshot is None:
                yield
                return
            self._sweep()
            self._pending.writing()
            yield
            self._snapshot.refresh(item_file_paths(self.item, self._cache))
            self._write_pending()

    def close(self) -> None:
        """The run ends: the record on disk goes (kept when a call's changes were never
        put back, for the next run)."""
        with self._lock:
            if self._snapshot is None:
                self._pending.close()


def guard_of(item: WorkItem) -> Guard:
    """The item's guard (made on first use, installed as the item's commit hook)."""
    with item.journal.lock:
        if not isinstance(item.write_guard, Guard):
            item.write_guard = Guard(item)
        return item.write_guard


class WorktreeRecord:
    """The ``.phasegate/`` files of the git worktree one call works in, as they were when
    it began (only that call's item works there)."""

    def __init__(self, folder: Path, exempt: Iterable[Path]) -> None:
        self.folder = folder
        self.exempt = frozenset(os.path.abspath(p) for p in exempt)
        self.cache = ReadCache()
        self.files = {path: self.cache.read(path) for path in self._listed()}

    @classmethod
    def of(
        cls, item: WorkItem, workdir: Path | None, exempt: Iterable[Path]
    ) -> WorktreeRecord | None:
        """The record for a call in ``workdir``, when that is not the item's own work tree."""
        if workdir is None or os.fspath(workdir) == os.fspath(item.repo):
            # The item's own work tree (the same path resolves to the same folder).
            return None
        folder = workdir / CONFIG_DIR
        if not folder.is_dir() or folder.resolve() == (item.repo / CONFIG_DIR).resolve():
            return None
        return cls(folder, exempt)

    def _listed(self) -> list[str]:
        found: list[str] = []
        for top, dirs, files in os.walk(self.folder):
            if os.path.samefile(top, self.folder):
                dirs[:] = [d for d in dirs if d not in UNPROTECTED_DIRS]
            for name in (*files, *(d for d in dirs if os.path.islink(os.path.join(top, d)))):
                path = os.path.join(top, name)
                if os.path.abspath(path) not in self.exempt:
                    found.append(path)
        return found

    def undo(self, repo: Path) -> Violation | None:
        """Put back what differs from the record; what it was, or ``None``."""
        changed = [p for p, was in self.files.items() if self.cache.read(p) != was]
        changed += [p for p in self._listed() if p not in self.files]
        for path in sorted(changed, key=len):
            was: _Copy = self.files.get(path, ABSENT)
            put_back(Path(path), was)
        if not changed:
            return None
        return Violation(tuple(_shown(repo, p) for p in changed), ())


def guarded_call(
    item: WorkItem,
    call: Callable[[], AgentResult],
    *,
    key: str,
    attempt: str,
    role: str,
    exempt: Iterable[Path] = (),
    workdir: Path | None = None,
    writes: Iterable[Path] | None = None,
    node: str | None = None,
) -> AgentResult:
    """Run ``call`` (one agent call); undo and report any change made to phasegate's files
    while it ran (``exempt``: files of ``.phasegate/`` the backend itself writes), and to
    those of ``workdir``, the git worktree it works in (when not the item's work tree).
    ``writes`` (when given): the only files the call may change; whatever else it changed
    of the work tree or the item's folder is put back and journaled, the call standing
    (:mod:`phasegate.engine.protect_outputs`). ``node``: the path of the call's node, whose
    view may keep more of the workflow's files from it (another node's artifact).

    The result of a call that changed them is a failed one naming the files,
    unless ``protection.on_violation`` is ``stop``: then
    :class:`ProtectedFilesChanged` stops the run.
    """
    guard = guard_of(item)
    found: list[Violation] = []
    local = WorktreeRecord.of(item, workdir, exempt)
    confined = (
        OutputsRecord(item, workdir or item.repo, writes, exempt, guard.git)
        if writes is not None
        else None
    )
    # The workflow's files this role may not change (the view says which, and how much).
    watched = item.view.watch_call(role)
    watched_node = item.view.watch_node(node) if node is not None else None
    # What the view keeps from the call (an undo may carry ``recorded``: path -> its copy
    # when the call began), on disk with the guard's record while the call runs.
    kept: dict[str, _Copy] = {
        **(getattr(watched, "recorded", None) or {}),
        **(getattr(watched_node, "recorded", None) or {}),
    }
    here: list[Violation] = []
    outside: tuple[str, ...] = ()
    try:
        with guard.watching(exempt, kept) as found:  # undone after an interrupt too
            try:
                result = call()
            finally:
                undone = local.undo(item.repo) if local is not None else None
                if undone is not None:
                    here.append(undone)
                put_back = watched() if watched is not None else []
                if confined is not None:
                    # First: what a confined call changed outside its outputs is put back
                    # as that (the call stands), another node's artifact included.
                    outside = confined.undo(
                        item.repo, whole_tree=not _other_runs(item), keep=_keep(item, attempt)
                    )
                if watched_node is not None:
                    put_back += watched_node()
                if put_back:
                    here.append(Violation((), (), tuple(put_back)))
    finally:
        if outside:
            # Put back, and said: the call itself stands (its outputs are what counts).
            keep = _keep(item, attempt)
            item.record(
                "agent.violation",
                key=key,
                attempt=attempt,
                role=role,
                paths=[],
                kept=[outside_words(outside, _shown(item.repo, keep) if keep.is_dir() else None)],
                outside_outputs=list(outside),
                forged_events=[],
                forged_lines=[],
                reverted=True,
                sync_now=True,
            )
        violation = _merged([*found, *here]) if found or here else None
        if violation is not None:
            item.record(
                "agent.violation",
                key=key,
                attempt=attempt,
                role=role,
                paths=list(violation.paths),
                **({"kept": list(violation.kept)} if violation.kept else {}),
                forged_events=event_names(violation.forged),
                forged_lines=list(violation.forged[:QUOTED_LINES]),
                reverted=True,
                sync_now=True,
            )
    if violation is None:
        return result
    message = violation.describe(role)
    if item.config.protection.on_violation == "stop":
        raise ProtectedFilesChanged(
            f"{message}; the run stopped (protection.on_violation: stop in "
            f".phasegate/config.yaml). Run again to retry: phasegate run {item.name}"
        )
    return replace(result, exit_status=result.exit_status or 1, error=message, structured=None)


def _keep(item: WorkItem, attempt: str) -> Path:
    """Where what a confined call wrote outside its outputs is copied before it is put back."""
    return item.repo / CONFIG_DIR / CACHE_DIR / "put-back" / attempt


def _other_runs(item: WorkItem) -> bool:
    """Whether a run of another item goes on in the repository (its agents may be
    changing the work tree too)."""
    from phasegate.engine.live_run import live_runs

    return any(key != (item.workflow.name, item.name) for key in live_runs(item.repo))


def _shown(repo: Path, path: str | Path) -> str:
    try:
        return Path(path).relative_to(repo).as_posix()
    except ValueError:
        return str(path)
