"""A record of phasegate's own files, and putting them back as recorded.

What :mod:`phasegate.engine.protect` keeps while agent calls run: the files of
the repository's ``.phasegate/`` folder and the work item's state files by
content, and the journal by its length, last bytes (all of it when short) and
the lines phasegate appended since.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from phasegate.engine.item import WorkItem
from phasegate.engine.protect_walk import (
    Listing,
    absolute_path,
    item_folders,
    list_folder,
    phasegate_files,
)
from phasegate.errors import StateCorruptError
from phasegate.repo_paths import CONFIG_DIR
from phasegate.state.atomic import atomic_write_bytes

#: A journal up to this size is recorded whole (so a rewrite can be put back);
#: a longer one by its size and its last bytes (an append is still cut out).
JOURNAL_COPY_LIMIT = 8 * 1024 * 1024
JOURNAL_TAIL = 64 * 1024
#: Events other phasegate commands journal while a run goes on (``phasegate answer``, the
#: dashboard): kept when found among the lines added during a call. An agent that can run
#: ``phasegate answer`` gains nothing by writing such a line itself; the answer is checked
#: like any other.
EXTERNAL_EVENTS = frozenset({"decision.answered"})


@dataclass(frozen=True)
class _Copy:
    """A file as recorded: its bytes (or a link's target) and mode."""

    kind: Literal["absent", "file", "link", "other"]
    content: bytes = b""
    mode: int = 0o644


@dataclass
class _JournalRecord:
    """The journal as recorded when the first call began, and what phasegate appended since."""

    size: int
    inode: int
    tail: bytes
    whole: bytes | None
    own: bytearray = field(default_factory=bytearray)

    def expected_size(self) -> int:
        return self.size + len(self.own)

    def expected_tail(self) -> bytes:
        return (self.tail + bytes(self.own[-JOURNAL_TAIL:]))[-JOURNAL_TAIL:]


#: A file whose last change is at least this old (nanoseconds) when it is read is
#: known by its signature (inode, size, change and modification times) until the
#: signature changes: file times advance in clock ticks of a few milliseconds, so a
#: file changed within the same tick as its read could keep its signature.
SETTLED_NS = 100_000_000


@dataclass(frozen=True)
class _Known:
    signature: tuple[int, ...]
    copy: _Copy


class ReadCache:
    """Files as last read, by signature, so a file unchanged since is not read again.

    A file is trusted by its signature only when it had not changed for
    :data:`SETTLED_NS` when it was read (as git treats racily clean index entries);
    one changed more recently is read again each time. Folder listings are kept
    the same way. The journal is known by its inode, size and last bytes, and read
    again only from where it ended (between calls only phasegate appends to it).
    """

    def __init__(self) -> None:
        self._files: dict[Path, _Known] = {}
        self._folders: dict[str, tuple[tuple[int, ...], Listing]] = {}
        self._journal: tuple[Path, int, bytes] | None = None

    def read(self, path: Path) -> _Copy:
        """``path`` as it is now (see :func:`_read`)."""
        try:
            info = path.lstat()
        except FileNotFoundError:
            self._files.pop(path, None)
            return _Copy("absent")
        signature = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        known = self._files.get(path)
        if known is not None and known.signature == signature:
            return known.copy
        copy = _read(path)
        if _settled(info):
            self._files[path] = _Known(signature, copy)
        else:
            self._files.pop(path, None)
        return copy

    def listing(self, folder: str) -> Listing:
        """``folder``'s entries (:func:`list_folder`), listed again when it changed."""
        try:
            info = os.lstat(folder)
        except OSError:
            self._folders.pop(folder, None)
            return Listing()
        signature = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        known = self._folders.get(folder)
        if known is not None and known[0] == signature:
            return known[1]
        found = list_folder(folder)
        if _settled(info):
            self._folders[folder] = (signature, found)
        else:
            self._folders.pop(folder, None)
        return found

    def journal(self, path: Path) -> _JournalRecord:
        """The journal as it is now (:func:`_record`), reading only what was appended since
        the last record when it has only grown."""
        known, self._journal = self._journal, None
        try:
            info = path.lstat()
        except FileNotFoundError:
            return _record(path)
        if (
            known is None
            or known[0] != path
            or known[1] != info.st_ino
            or len(known[2]) > info.st_size
            or info.st_size > JOURNAL_COPY_LIMIT
            or _tail_at(path, len(known[2]), 4096) != known[2][-4096:]
        ):
            found = _record(path)
        else:
            whole = known[2] + _read_from(path, len(known[2]))
            start = max(0, len(whole) - JOURNAL_TAIL)
            found = _JournalRecord(len(whole), info.st_ino, whole[start:], whole)
        if found.whole is not None and found.inode:
            self._journal = (path, found.inode, found.whole)
        return found


def _settled(info: os.stat_result) -> bool:
    return time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) >= SETTLED_NS


@dataclass
class Snapshot:
    """phasegate's own files as phasegate last left them."""

    files: dict[Path, _Copy] = field(default_factory=dict)
    #: The folder whose new files count as changes (``.phasegate/``).
    config_dir: Path | None = None
    #: Files under ``config_dir`` that are not phasegate's (a backend's own log).
    exempt: frozenset[Path] = frozenset()
    journal: Path | None = None
    record: _JournalRecord | None = None
    #: Work-item folders inside ``config_dir`` (a workflow may keep its items there): this
    #: item's files are recorded as its state files, other items' are their runs' own.
    item_dirs: frozenset[Path] = frozenset()
    #: Files as last read (kept from one snapshot to the next by the item's guard).
    cache: ReadCache = field(default_factory=ReadCache)

    @classmethod
    def take(
        cls, item: WorkItem, exempt: Iterable[Path] = (), cache: ReadCache | None = None
    ) -> Snapshot:
        """Record ``item``'s state files, its journal and the repository's ``.phasegate/``."""
        config_dir = item.repo / CONFIG_DIR
        snapshot = cls(
            config_dir=config_dir,
            exempt=frozenset(absolute_path(p) for p in exempt),
            journal=item.journal.path,
            cache=cache if cache is not None else ReadCache(),
        )
        snapshot.item_dirs = item_folders(config_dir, item, snapshot.cache.listing)
        read = snapshot.cache.read
        for path in snapshot.config_files():
            snapshot.files[path] = read(path)
        for path in item_files(item):
            snapshot.files[path] = read(path)
        snapshot.record = snapshot.cache.journal(item.journal.path)
        return snapshot

    def config_files(self) -> Iterator[Path]:
        assert self.config_dir is not None
        files = phasegate_files(self.config_dir, self.item_dirs, self.cache.listing)
        if not self.exempt:
            yield from files
            return
        for path in files:
            if absolute_path(path) not in self.exempt:
                yield path

    def exempt_too(self, paths: Iterable[Path]) -> None:
        """Files a backend of a call that began later writes itself: no longer recorded."""
        more = frozenset(absolute_path(p) for p in paths) - self.exempt
        if more:
            self.exempt |= more
            for path in [p for p in self.files if absolute_path(p) in more]:
                del self.files[path]

    def refresh(self, paths: Iterable[Path]) -> None:
        """phasegate itself just wrote ``paths``: record them as they are now."""
        for path in paths:
            self.files[path] = self.cache.read(path)

    def changed_files(self) -> list[Path]:
        """The recorded files that differ now, and files new in ``.phasegate/``."""
        read = self.cache.read
        changed = [path for path, was in self.files.items() if read(path) != was]
        if self.config_dir is not None:
            changed += [p for p in self.config_files() if p not in self.files]
        return changed

    def journal_changed(self) -> bool:
        """Whether the journal holds anything phasegate did not write since the record."""
        assert self.journal is not None and self.record is not None
        was = self.record
        size = was.expected_size()
        try:
            info = self.journal.lstat()
        except FileNotFoundError:
            return size > 0
        if not stat.S_ISREG(info.st_mode) or info.st_size != size:
            return True
        if was.inode and info.st_ino != was.inode:
            return True
        return _tail_at(self.journal, size) != was.expected_tail()

    def restore(self, changed: list[Path]) -> None:
        """Put the files in ``changed`` back as recorded."""
        for path in changed:
            _put_back(path, self.files.get(path, _Copy("absent")))

    def settle_journal(self) -> tuple[bool, list[str]]:
        """Make the journal the record plus phasegate's own lines (and answers other phasegate
        commands journaled meanwhile); whether an agent changed it, and the lines it added."""
        assert self.journal is not None and self.record is not None
        if not self.journal_changed():
            return False, []
        path, was = self.journal, self.record
        intact = (
            _is_file(path)
            and path.stat().st_size >= was.size
            and _tail_at(path, was.size) == was.tail
            and (was.whole is None or _prefix(path, was.size) == was.whole)
        )
        if intact:  # only appended to: phasegate's lines stay, the others are cut out
            added = _read_from(path, was.size)
            kept, forged = _sort_lines(added, bytes(was.own))
            if kept != added:
                _rewrite_from(path, was.size, kept)
            was.own = bytearray(kept)
            was.inode = path.stat().st_ino
            return bool(forged) or kept != added, forged
        if was.whole is None:
            raise StateCorruptError(
                f"journal {path} was rewritten during an agent call and is too long to have "
                "been recorded whole; restore it from a backup (the run stopped here)"
            )
        content = was.whole + bytes(was.own)
        _put_back(path, _Copy("file", content) if content else _Copy("absent"))
        was.inode = path.stat().st_ino if content else 0
        return True, []

    def own_append(self, line: bytes) -> None:
        """phasegate appended ``line`` to the journal."""
        assert self.journal is not None and self.record is not None
        if not self.record.inode:  # the journal was created by this append
            with contextlib.suppress(FileNotFoundError):
                self.record.inode = self.journal.stat().st_ino
        self.record.own += line


def item_files(item: WorkItem) -> list[Path]:
    """The item's state files: the engine's and its view's."""
    return [item.engine_path, *item.view.files()]


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except FileNotFoundError:
        return False


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


def _record(path: Path) -> _JournalRecord:
    """The journal as it is now (its last bytes; all of it when short)."""
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            start = max(0, info.st_size - JOURNAL_TAIL)
            handle.seek(start)
            tail = handle.read(info.st_size - start)
            whole = None
            if info.st_size <= JOURNAL_COPY_LIMIT:
                handle.seek(0)
                whole = handle.read(info.st_size)
    except FileNotFoundError:
        return _JournalRecord(0, 0, b"", b"")
    return _JournalRecord(info.st_size, info.st_ino, tail, whole)


def _tail_at(path: Path, end: int, length: int = JOURNAL_TAIL) -> bytes:
    """The (up to ``length``) bytes of ``path`` before offset ``end``."""
    start = max(0, end - length)
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            return handle.read(end - start)
    except FileNotFoundError:
        return b""


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


def _read_from(path: Path, offset: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read()


def _rewrite_from(path: Path, offset: int, content: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(offset)
        handle.seek(offset)
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())


def _sort_lines(added: bytes, own: bytes) -> tuple[bytes, list[str]]:
    """Of the journal lines ``added`` since the record: those to keep (phasegate's ``own``,
    in order, and answers journaled by other phasegate commands), and the others as text."""
    mine = own.splitlines(keepends=True)
    kept: list[bytes] = []
    forged: list[str] = []
    at = 0
    for line in added.splitlines(keepends=True):
        if at < len(mine) and line == mine[at]:
            kept.append(line)
            at += 1
        elif line.endswith(b"\n") and event_name(line) in EXTERNAL_EVENTS:
            kept.append(line)
        elif line.strip():
            forged.append(line.decode("utf-8", "replace").rstrip("\n"))
    return b"".join(kept) + b"".join(mine[at:]), forged


def event_name(line: bytes | str) -> str:
    """The event a journal line holds, or what it is instead."""
    try:
        found = json.loads(line)
    except ValueError:
        return "(not JSON)"
    return str(found.get("event")) if isinstance(found, dict) else "(not an event)"


def event_names(lines: Iterable[str]) -> list[str]:
    """:func:`event_name` of each line."""
    return [event_name(line) for line in lines]
