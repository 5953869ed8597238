"""phasegate's own files as last read, kept from one agent call to the next so that what
did not change is not read (nor its folder listed, nor ``.phasegate/`` walked) again.

Everything here is trusted by signature only when it had not changed for
:data:`SETTLED_NS` when it was read, as git treats racily clean index entries: file
times advance in clock ticks of a few milliseconds, so a file changed within the same
tick as its read could keep its signature.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from phasegate.engine.item import WorkItem
from phasegate.engine.protect_walk import (
    FolderSignature,
    Layout,
    Listing,
    find_layout,
    list_folder,
)
from phasegate.repo_paths import CONFIG_DIR

#: A journal up to this size is recorded whole (so a rewrite can be put back);
#: a longer one by its size and its last bytes (an append is still cut out).
JOURNAL_COPY_LIMIT = 8 * 1024 * 1024
JOURNAL_TAIL = 64 * 1024
#: How much of the journal's end as last read must be found again for the journal to be
#: read on from there (rather than all again).
JOURNAL_CHECKED = 4096

#: A file whose last change is at least this old (nanoseconds) when it is read is
#: known by its signature (inode, size, change and modification times) until the
#: signature changes.
SETTLED_NS = 100_000_000


@dataclass(frozen=True)
class _Copy:
    """A file as recorded: its bytes (or a link's target) and mode."""

    kind: Literal["absent", "file", "link", "other"]
    content: bytes = b""
    mode: int = 0o644


ABSENT = _Copy("absent")


class _JournalRecord:
    """The journal as recorded when the first call began (its size, inode, last bytes and,
    when short enough, all of it), and what phasegate appended since (``own``)."""

    def __init__(
        self,
        size: int,
        inode: int,
        tail: bytes | None,
        whole: bytes | bytearray | None,
    ) -> None:
        self.size = size
        self.inode = inode
        #: All of the journal as read (possibly more, read later: only ``size`` counts).
        self._content = whole
        self._tail = tail
        self.own = bytearray()

    @property
    def whole(self) -> bytes | None:
        """All of the journal as recorded (``None`` when it was too long)."""
        if self._content is None:
            return None
        return bytes(self._content[: self.size])

    @property
    def tail(self) -> bytes:
        """The journal's last :data:`JOURNAL_TAIL` bytes as recorded."""
        if self._tail is None:
            assert self._content is not None
            self._tail = bytes(self._content[max(0, self.size - JOURNAL_TAIL) : self.size])
        return self._tail

    def expected_size(self) -> int:
        return self.size + len(self.own)

    def expected_tail(self) -> bytes:
        if not self.own:
            return self.tail
        return (self.tail + bytes(self.own[-JOURNAL_TAIL:]))[-JOURNAL_TAIL:]

    def is_expected_tail(self, found: bytes) -> bool:
        """Whether ``found`` is :meth:`expected_tail` (compared part by part, not joined)."""
        own = self.own
        if len(own) >= JOURNAL_TAIL:
            return found == own[-JOURNAL_TAIL:]
        # The recorded tail is ``held[end - length : end]``.
        content = self._content
        held: bytes | bytearray
        if self._tail is not None or content is None:
            held = self.tail
            end = length = len(held)
        else:
            held = content
            end = min(self.size, len(content))
            length = max(0, end - max(0, self.size - JOURNAL_TAIL))
        need = min(JOURNAL_TAIL - len(own), length)
        if len(found) != need + len(own):
            return False
        # Compared in place (no copies of the up to JOURNAL_TAIL bytes): ``found`` is exactly
        # ``need`` bytes then ``own``.
        with memoryview(held) as view:
            return found.endswith(own) and found.startswith(view[end - need : end])


@dataclass(frozen=True)
class _Known:
    signature: tuple[int, ...]
    copy: _Copy


class ReadCache:
    """Files as last read, by signature, so a file unchanged since is not read again.

    A file is trusted by its signature only when it had not changed for
    :data:`SETTLED_NS` when it was read; one changed more recently is read again each
    time. Folder listings are kept the same way, and so is the walk of ``.phasegate/``
    (:class:`~phasegate.engine.protect_walk.Layout`). The journal is known by its inode,
    size and last bytes, and read again only from where it ended (between calls only
    phasegate appends to it).
    """

    def __init__(self) -> None:
        self._files: dict[str, _Known] = {}
        self._folders: dict[str, tuple[FolderSignature, Listing]] = {}
        #: The journal as last read: its path, inode and content (only ever appended to).
        self._journal: tuple[str, int, bytearray] | None = None
        self._layout: tuple[tuple[str, str], Layout] | None = None
        #: The item's state files (see :func:`~phasegate.engine.protect_snapshot.item_file_paths`).
        self.item_files: tuple[Hashable, tuple[str, ...]] | None = None
        #: A repository's path as given, and its ``.phasegate/`` folder.
        self._config_dir: tuple[Path, Path] | None = None

    def config_dir(self, repo: Path) -> Path:
        """``repo``'s ``.phasegate/`` folder (joined again only for another ``repo``)."""
        known = self._config_dir
        if known is None or known[0] is not repo:
            known = self._config_dir = (repo, repo / CONFIG_DIR)
        return known[1]

    def read(self, path: str | Path) -> _Copy:
        """``path`` as it is now (a link's target, never what it points at)."""
        key = path if type(path) is str else os.fspath(path)
        try:
            info = os.lstat(key)
        except (FileNotFoundError, NotADirectoryError):  # a file in place of its folder
            self._files.pop(key, None)
            return ABSENT
        known = self._files.get(key)
        signature = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if known is not None and known.signature == signature:
            return known.copy
        copy = _read(key, info)
        if _settled(info):
            self._files[key] = _Known(signature, copy)
        else:
            self._files.pop(key, None)
        return copy

    def listed(self, folder: str) -> tuple[FolderSignature, bool, Listing]:
        """``folder``'s signature, whether it was settled, and its entries
        (:func:`list_folder`, listed again when it changed)."""
        try:
            info = os.lstat(folder)
        except OSError:
            self._folders.pop(folder, None)
            return None, True, Listing()
        signature = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        known = self._folders.get(folder)
        if known is not None and known[0] == signature:
            return signature, True, known[1]
        found = list_folder(folder)
        settled = _settled(info)
        if settled:
            self._folders[folder] = (signature, found)
        else:
            self._folders.pop(folder, None)
        return signature, settled, found

    def listing(self, folder: str) -> Listing:
        """``folder``'s entries (:func:`list_folder`), listed again when it changed."""
        return self.listed(folder)[2]

    def layout(
        self, config_dir: Path, item: WorkItem, item_dirs: frozenset[str] | None = None
    ) -> Layout:
        """``config_dir``'s work-item folders and files (with ``item_dirs`` as its work-item
        folders when given), walked again only when one of its folders changed."""
        key = (os.fspath(config_dir), os.fspath(item.item_dir))
        if self._layout is not None and self._layout[0] == key:
            known = self._layout[1]
            if (item_dirs is None or item_dirs == known.item_dirs) and known.current():
                return known
        found = find_layout(config_dir, item, self.listed, item_dirs)
        # Only a layout whose work-item folders were found from the listings is kept.
        if found.reusable and item_dirs is None:
            self._layout = (key, found)
        return found

    def journal(self, path: str | Path) -> _JournalRecord:
        """The journal as it is now (:func:`_record`), reading only what was appended since
        the last record when it has only grown."""
        key = os.fspath(path)
        known, self._journal = self._journal, None
        try:
            info = os.lstat(key)
        except FileNotFoundError:
            return _record(key)
        found: _JournalRecord | None = None
        if (
            known is not None
            and known[0] == key
            and known[1] == info.st_ino
            and len(known[2]) <= info.st_size <= JOURNAL_COPY_LIMIT
        ):
            found = _read_on(key, known[2], info)
        if found is None:
            found = _record(key)
        content = found._content
        if content is not None and found.inode:
            buffer = content if isinstance(content, bytearray) else bytearray(content)
            self._journal = (key, found.inode, buffer)
            found._content = buffer
        return found


def _settled(info: os.stat_result) -> bool:
    return time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) >= SETTLED_NS


def _read(path: str, info: os.stat_result) -> _Copy:
    """``path`` as ``info`` (its :func:`os.lstat` just now) says it is."""
    try:
        if stat.S_ISLNK(info.st_mode):
            return _Copy("link", os.fsencode(os.readlink(path)))
        if not stat.S_ISREG(info.st_mode):
            return _Copy("other", mode=stat.S_IMODE(info.st_mode))
        return _Copy("file", read_bytes(path, expected=info.st_size), stat.S_IMODE(info.st_mode))
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT


def read_bytes(path: str | Path, offset: int = 0, expected: int = -1, limit: int = -1) -> bytes:
    """The bytes of ``path`` from ``offset`` to its end (or ``limit`` of them when not
    negative), read with plain system calls. ``expected``: how many its size (from
    :func:`os.lstat` just before) leaves; when exactly that many are found, no more are
    looked for (the size is the one its signature was taken with)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a fifo put in its place never blocks
    try:
        if limit >= 0:
            wanted, last = limit, limit
        else:
            wanted, last = max(expected, 0) + 1, expected
        found = os.pread(fd, wanted, offset)
        if len(found) == last or not found:
            return found
        chunks = [found]
        got = len(found)
        while limit < 0 or got < limit:
            more = os.pread(fd, max(65536, limit - got), offset + got)
            if not more:
                break
            chunks.append(more)
            got += len(more)
        return b"".join(chunks)[: limit if limit >= 0 else None]
    finally:
        os.close(fd)


def _read_on(path: str, known: bytearray, info: os.stat_result) -> _JournalRecord | None:
    """The journal read on from where ``known`` (its content as last read) ends, ``known``
    extended with it; ``None`` when the journal no longer ends as ``known`` did."""
    end = len(known)
    start = max(0, end - JOURNAL_CHECKED)
    try:
        found = read_bytes(path, start, info.st_size - start)
    except FileNotFoundError:
        return None
    with memoryview(known) as view:
        if not found.startswith(view[start:]):
            return None
    known += found[end - start :]
    return _JournalRecord(len(known), info.st_ino, None, known)


def _record(path: str | Path) -> _JournalRecord:
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


def _tail_at(path: str | Path, end: int, length: int = JOURNAL_TAIL) -> bytes:
    """The (up to ``length``) bytes of ``path`` before offset ``end``."""
    start = max(0, end - length)
    try:
        return read_bytes(path, start, limit=end - start)
    except FileNotFoundError:
        return b""


def _read_from(path: str | Path, offset: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read()
