"""Agents cannot change phasegate's own files.

Before each agent call the content of phasegate's own files is recorded: the
repository's ``.phasegate/`` folder (config, workflows, prompts, the scripted
agents' script; not its ``locks/``, ``cache/`` or item ``worktrees/``) and the
work item's state files (the engine's state, the files its view writes such as
``.meta.json``, ``.review-history.md`` or ``STATE.yaml``, and the journal).
After the call, whatever changed during it is put back from that record:
changed files get their old bytes, new files are removed, removed ones come
back, and lines appended to the journal (forged events) are cut off before
phasegate appends its own. The change is journaled as ``agent.violation``
with the paths, and the call counts as failed (retried like any failed call)
or, with ``protection: {on_violation: stop}`` in the config, stops the run.

The record is taken after phasegate journaled the call's dispatch and is put
back before it journals the call's result, so nothing phasegate writes itself
is undone. This holds when the call is interrupted too (Ctrl-C, a stop
signal): an agent's edits never outlive its call.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from phasegate.agents.base import AgentResult
from phasegate.engine.item import WorkItem
from phasegate.errors import AgentError, StateCorruptError
from phasegate.repo_paths import CACHE_DIR, CONFIG_DIR, LOCKS_DIR, WORKTREES_DIR
from phasegate.state.atomic import atomic_write_bytes

#: Folders of ``.phasegate/`` that runs write themselves (or agents work in).
UNPROTECTED_DIRS = frozenset({LOCKS_DIR, CACHE_DIR, WORKTREES_DIR})
#: How many forged journal lines a violation event quotes.
QUOTED_LINES = 5
#: A journal up to this size is recorded whole (so a rewrite can be put back);
#: a longer one by its size and its last bytes (an append is still cut off).
JOURNAL_COPY_LIMIT = 8 * 1024 * 1024
JOURNAL_TAIL = 64 * 1024


class ProtectedFilesChanged(AgentError):
    """An agent changed phasegate's own files and the config says to stop the run."""


@dataclass(frozen=True)
class _Copy:
    """A file as recorded: its bytes (or a link's target) and mode."""

    kind: Literal["absent", "file", "link", "other"]
    content: bytes = b""
    mode: int = 0o644


@dataclass(frozen=True)
class _JournalMark:
    """The journal as recorded: its length, identity, last bytes, and all of it when short."""

    size: int
    identity: tuple[int, int]
    tail: bytes
    whole: bytes | None = None


@dataclass
class Snapshot:
    """phasegate's own files as they were when an agent call began."""

    files: dict[Path, _Copy] = field(default_factory=dict)
    #: The folder whose new files count as changes (``.phasegate/``).
    config_dir: Path | None = None
    journal: Path | None = None
    mark: _JournalMark | None = None

    @classmethod
    def take(cls, item: WorkItem) -> Snapshot:
        """Record ``item``'s state files, its journal and the repository's ``.phasegate/``."""
        snapshot = cls(config_dir=item.repo / CONFIG_DIR, journal=item.journal.path)
        for path in _config_files(item.repo / CONFIG_DIR):
            snapshot.files[path] = _read(path)
        for path in (item.engine_path, *item.view.files()):
            snapshot.files[path] = _read(path)
        snapshot.mark = _mark(item.journal.path)
        return snapshot

    def changed_files(self) -> list[Path]:
        """The recorded files that differ now, and files new in ``.phasegate/``."""
        changed = [path for path, was in self.files.items() if _read(path) != was]
        if self.config_dir is not None:
            changed += [p for p in _config_files(self.config_dir) if p not in self.files]
        return changed

    def journal_changed(self) -> bool:
        """Whether the journal was written to during the call (phasegate does not write it
        while an agent works)."""
        assert self.journal is not None and self.mark is not None
        now = _mark(self.journal, self.mark.size)
        was = self.mark
        return (now.size, now.identity, now.tail) != (was.size, was.identity, was.tail)

    def restore(self, changed: list[Path]) -> None:
        """Put the files in ``changed`` back as recorded."""
        for path in changed:
            _put_back(path, self.files.get(path, _Copy("absent")))

    def restore_journal(self) -> list[str]:
        """Put the journal back as recorded; the lines appended during the call, as text."""
        assert self.journal is not None and self.mark is not None
        path, was = self.journal, self.mark
        now = _mark(path, was.size)
        appended = now.size >= was.size and now.tail == was.tail and _is_file(path)
        if appended and (was.whole is None or _prefix(path, was.size) == was.whole):
            return _cut(path, was.size)  # only appended to: the forged lines are cut off
        if was.whole is None:
            raise StateCorruptError(
                f"journal {path} was rewritten during an agent call and is too long to have "
                "been recorded whole; restore it from a backup (the run stopped here)"
            )
        _put_back(path, _Copy("file", was.whole) if was.size else _Copy("absent"))
        return []


def _is_file(path: Path) -> bool:
    return stat.S_ISREG(path.lstat().st_mode) if path.exists() else False


def _config_files(folder: Path) -> Iterator[Path]:
    """Every file or link below ``folder``, without the folders runs write themselves."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        if here == folder:
            dirs[:] = [d for d in dirs if d not in UNPROTECTED_DIRS]
        dirs.sort()
        for name in sorted(files):
            yield here / name
        for name in list(dirs):  # a link to a folder is listed with the folders: a file here
            if (here / name).is_symlink():
                dirs.remove(name)
                yield here / name


def _read(path: Path) -> _Copy:
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return _Copy("link", os.fsencode(os.readlink(path)))
        if not stat.S_ISREG(info.st_mode):
            return _Copy("other", mode=stat.S_IMODE(info.st_mode))
        return _Copy("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    except FileNotFoundError:
        return _Copy("absent")


def _mark(path: Path, at: int | None = None) -> _JournalMark:
    """The journal's mark; with ``at``, its tail is the bytes before ``at`` (to compare)."""
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            end = info.st_size if at is None else min(at, info.st_size)
            start = max(0, end - JOURNAL_TAIL)
            handle.seek(start)
            tail = handle.read(end - start)
            whole = None
            if at is None and info.st_size <= JOURNAL_COPY_LIMIT:
                handle.seek(0)
                whole = handle.read(info.st_size)
    except FileNotFoundError:
        return _JournalMark(0, (0, 0), b"", b"")
    return _JournalMark(info.st_size, (info.st_ino, info.st_mtime_ns), tail, whole)


def _prefix(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(size)


def _put_back(path: Path, was: _Copy) -> None:
    """Make ``path`` what it was, never writing through a link an agent put there."""
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if was.kind == "link":
        os.symlink(os.fsdecode(was.content), path)
    elif was.kind == "file":
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, was.content, durable=True)
        os.chmod(path, was.mode)


def _cut(path: Path, size: int) -> list[str]:
    with open(path, "r+b") as handle:
        handle.seek(size)
        added = handle.read()
        handle.truncate(size)
        handle.flush()
        os.fsync(handle.fileno())
    return [line.decode("utf-8", "replace") for line in added.splitlines() if line.strip()]


def _event_names(lines: list[str]) -> list[str]:
    names: list[str] = []
    for line in lines:
        try:
            found = json.loads(line)
        except ValueError:
            names.append("(not JSON)")
            continue
        names.append(str(found.get("event")) if isinstance(found, dict) else "(not an event)")
    return names


@dataclass(frozen=True)
class Violation:
    """What an agent changed of phasegate's files during one call (all of it put back)."""

    paths: tuple[str, ...]
    forged: tuple[str, ...]

    def describe(self, role: str) -> str:
        forged = f" and {len(self.forged)} forged journal line(s) removed" if self.forged else ""
        return (
            f"{role} changed phasegate's own files during its call ({', '.join(self.paths)}); "
            f"they were put back as they were{forged}"
        )


def undo_changes(item: WorkItem, snapshot: Snapshot) -> Violation | None:
    """Put back what changed since ``snapshot``; what it was, or ``None``."""
    changed = snapshot.changed_files()
    journal = snapshot.journal_changed()
    if not changed and not journal:
        return None
    snapshot.restore(changed)
    forged = snapshot.restore_journal() if journal else []
    shown = [_shown(item.repo, p) for p in changed]
    if journal:
        shown.append(_shown(item.repo, item.journal.path))
    return Violation(tuple(shown), tuple(forged))


def guarded_call(
    item: WorkItem,
    call: Callable[[], AgentResult],
    *,
    key: str,
    attempt: str,
    role: str,
) -> AgentResult:
    """Run ``call`` (one agent call); undo and report any change it made to phasegate's files.

    The result of a call that changed them is a failed one naming the files,
    unless ``protection.on_violation`` is ``stop``: then
    :class:`ProtectedFilesChanged` stops the run.
    """
    snapshot = Snapshot.take(item)
    violation: Violation | None = None
    try:
        result = call()
    finally:  # after an interrupt too: an agent's edits never outlive its call
        violation = undo_changes(item, snapshot)
        if violation is not None:
            item.record(
                "agent.violation",
                key=key,
                attempt=attempt,
                role=role,
                paths=list(violation.paths),
                forged_events=_event_names(list(violation.forged)),
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


def _shown(repo: Path, path: Path) -> str:
    try:
        return path.relative_to(repo).as_posix()
    except ValueError:
        return str(path)
