"""The append-only JSONL journal of a work item.

The journal is also the write-ahead log of agent results: an agent's result is
appended here (and fsync'd) before the state file is updated from it, so a run
that dies between the two picks the result up from the journal instead of
calling the agent again.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from phasegate.errors import StateCorruptError, StorageError, is_storage_error
from phasegate.faults import crash_point
from phasegate.json_text import encode_json as encode_json  # the state's encoder too
from phasegate.redact import Redactor

#: Appends never follow a symbolic link put in the journal's place.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_last_stamp: tuple[int, str] = (-1, "")


def utc_now() -> str:
    """An ISO-8601 UTC timestamp with seconds precision (``2026-01-30T10:30:00Z``)."""
    global _last_stamp
    second = int(time.time())
    if second != _last_stamp[0]:  # formatted once a second: every event asks for it
        stamp = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        _last_stamp = (second, stamp)
    return _last_stamp[1]


#: A journal up to this size is checked line by line before a run appends to it; a longer
#: one has the lines before the state's position checked for their shape only.
CHECK_LIMIT = 4 * 1024 * 1024


def _ident(info: os.stat_result) -> tuple[int, ...]:
    """Which file ``info`` is, and who may write to it (a file made read-only since is
    opened afresh, so that the append fails as it would have)."""
    return (info.st_dev, info.st_ino, info.st_mode, info.st_uid, info.st_gid)


class _Handle:
    """The journal file open for appending, and which file it is (see :func:`_ident`)."""

    __slots__ = ("fd", "ident")

    def __init__(self, fd: int, ident: tuple[int, ...]) -> None:
        self.fd = fd
        self.ident = ident

    def close(self, _close: Callable[[int], None] = os.close) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                _close(fd)

    def __del__(self, _suppress: Any = contextlib.suppress) -> None:
        with _suppress(Exception):  # at exit, the modules' names may be gone already
            self.close()


class Journal:
    """Append and read the JSONL event log at ``path``.

    Appends are made while the caller holds the work item's lock. A line torn by
    a crash can only be the last one; it is dropped on the next append and
    ignored when reading. An append the file system refuses (disk full, I/O
    error, read-only) raises :class:`~phasegate.errors.StorageError` and takes
    back what it wrote, so the events before it stay intact.
    """

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        self.path = path
        self._redactor = redactor or Redactor()
        self._unsynced = False
        self._folder_made = False
        # Agents of parallel items finish on worker threads: one line at a time.
        self._lock = threading.RLock()
        #: Told of every line this journal appends (under :attr:`lock`), e.g. so that a
        #: guard of phasegate's files knows its own lines (see engine/protect.py).
        self.observer: Callable[[bytes], None] | None = None
        self._local = threading.local()
        #: The file the last append went to, kept open (used only under :attr:`lock`).
        self._handle: _Handle | None = None

    @property
    def lock(self) -> threading.RLock:
        """Held while a line is appended (re-entrant)."""
        return self._lock

    @property
    def last_offset(self) -> int:
        """Where the line this thread appended last begins (threads append at once)."""
        return int(getattr(self._local, "offset", 0))

    @last_offset.setter
    def last_offset(self, value: int) -> None:
        self._local.offset = value

    def append(self, event: str, *, sync_now: bool = True, **data: Any) -> dict[str, Any]:
        """Append one event and return it as written.

        With ``sync_now`` the line is fsync'd before returning (the write-ahead
        record of an agent result needs that). Without it the line reaches the
        OS at once, so it survives the process being killed, and is fsync'd by
        the next :meth:`sync` (done before every state commit).
        """
        record: dict[str, Any] = {"ts": utc_now(), "event": event}
        record.update(self._redactor.data(data))
        line = (encode_json(record) + "\n").encode("utf-8")
        try:
            with self._lock:
                self._write(line, sync_now)
        except OSError as exc:
            if is_storage_error(exc):
                raise StorageError.from_os_error(exc, self.path) from exc
            raise
        crash_point("journal.after_append")
        return record

    def _open(self) -> tuple[int, int]:
        """A descriptor appending to the file at :attr:`path`, and that file's length.

        The descriptor of the last append is used again while the path names the same
        file (checked at every append: a file put in its place is opened afresh)."""
        handle = self._handle
        if handle is not None:
            try:
                info = os.lstat(self.path)  # a link put in its place is never the same file
            except OSError:
                info = None
            if info is not None and _ident(info) == handle.ident:
                return handle.fd, info.st_size
            self._handle = None
            try:
                if info is None and self.path.parent.is_dir():
                    self._put_back(handle.fd)
            finally:
                handle.close()
        if not self._folder_made:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._folder_made = True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                # Appended through, the link would carry the item's lines (an agent's text)
                # into whatever file it names: a shell's start-up file, say.
                raise StateCorruptError(
                    f"journal {self.path} is a symbolic link now, which phasegate never "
                    "made: nothing is written through it; put the journal file back in its "
                    "place and run the same command again"
                ) from None
            if not isinstance(exc, FileNotFoundError):
                raise
            if not self._folder_made or self.path.parent.exists():
                raise
            # Made (or found) by this journal, gone since: made again, it would hold only
            # what comes next, with none of the item's files.
            raise StateCorruptError(
                f"folder {self.path.parent} was deleted while this run went on: nothing more "
                "was recorded in it (restore it, e.g. from git, and run the same command "
                "again to go on)"
            ) from None
        try:
            info = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        self._handle = _Handle(fd, _ident(info))
        return fd, info.st_size

    def _put_back(self, fd: int) -> None:
        """The journal was deleted (its folder kept) since the last append: make it again
        from the file still open at ``fd``, every line it held, and say so on stderr.
        Made again empty, the next run would find it shorter than the state records."""
        held = b""
        while True:
            chunk = os.pread(fd, 1 << 20, len(held))
            if not chunk:
                break
            held += chunk
        tmp = self.path.with_name(f".{self.path.name}.put-back-{os.getpid()}")
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o644)
        try:
            written = 0
            while written < len(held):
                written += os.write(out, held[written:])
            os.fsync(out)
        finally:
            os.close(out)
        try:
            os.link(tmp, self.path)  # never over a journal someone else made meanwhile
        except FileExistsError:
            return
        finally:
            os.unlink(tmp)
        lines = held.count(b"\n")
        sys.stderr.write(
            f"phasegate: warning: journal {self.path} was deleted while this run went on; "
            f"it was made again from the open file with every line it held ({lines}): "
            "nothing is lost, and there is nothing to do\n"
        )

    def close(self) -> None:
        """Close the file appends go to (the next append opens it again)."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is not None:
                handle.close()

    def _write(self, line: bytes, sync_now: bool) -> None:
        fd, size = self._open()
        try:
            # Checked on every append: another process (an MCP server writing
            # to the same journal) may have died mid-line since our last one.
            if size and os.pread(fd, 1, size - 1) != b"\n":
                size = self._drop_torn_tail(fd)
            crash_point("journal.before_append")
            #: Where the line just appended begins (another process may append too).
            self.last_offset = size
            try:
                written = 0
                while written < len(line):  # a nearly full disk may take only part of it
                    written += os.write(fd, line[written:])
                if sync_now:
                    os.fsync(fd)
            except OSError:
                # Take back the part of the line that got through: the journal
                # must end with the last complete event.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
            self._unsynced = not sync_now
            if self.observer is not None:
                self.observer(line)
        except BaseException:
            self.close()  # the next append opens the file afresh
            raise

    def sync(self) -> None:
        """Flush appends made without ``sync_now`` to stable storage."""
        if not self._unsynced:
            return
        try:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            if is_storage_error(exc):
                raise StorageError.from_os_error(exc, self.path) from exc
            raise
        self._unsynced = False

    @staticmethod
    def _drop_torn_tail(fd: int) -> int:
        """Cut a torn last line (another process died mid-line); the journal's length."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return size
        # Find the last complete line and cut the fragment after it.
        chunk = 4096
        end = size
        while end > 0:
            start = max(0, end - chunk)
            data = os.pread(fd, end - start, start)
            cut = data.rfind(b"\n")
            if cut >= 0:
                os.ftruncate(fd, start + cut + 1)
                return start + cut + 1
            end = start
        os.ftruncate(fd, 0)
        return 0

    def events(self) -> Iterator[dict[str, Any]]:
        """Yield every complete event in order; a corrupt line mid-file is an error."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        lines = raw.split(b"\n")
        torn_tail = lines.pop()  # empty when the file ends with a newline
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise StateCorruptError(
                    f"journal {self.path} line {number} is corrupt ({exc.__class__.__name__}); "
                    "it was left untouched"
                ) from None
            if not isinstance(record, dict):
                raise StateCorruptError(f"journal {self.path} line {number} is not a JSON object")
            yield record
        del torn_tail  # a fragment cut short by a crash: never an event

    def size(self) -> int:
        """The journal's length in bytes (0 when it does not exist)."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def tail(self, offset: int, first_line: int = 1) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """``(line number, byte offset, event)`` of every complete event from ``offset`` on.

        Reading starts where the last state commit left off, so a resumed run
        costs the same however long the journal is. A corrupt line, or one
        that is not an event object, raises :class:`StateCorruptError` naming
        the file and line; a torn last line (a crash mid-append) is skipped.
        """
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                raw = handle.read()
        except FileNotFoundError:
            return
        lines = raw.split(b"\n")
        lines.pop()  # a fragment cut short by a crash, or b"" after the last newline
        position = offset
        for number, line in enumerate(lines, start=first_line):
            start = position
            position += len(line) + 1
            if not line.strip():
                continue
            yield number, start, self._decode(line, number)

    def _decode(self, line: bytes, number: int) -> dict[str, Any]:
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise StateCorruptError(
                f"journal {self.path} line {number} is corrupt ({exc.__class__.__name__}); "
                "it was left untouched"
            ) from None
        if not isinstance(record, dict) or not isinstance(record.get("event"), str):
            raise StateCorruptError(
                f"journal {self.path} line {number} is not an event object; it was left untouched"
            )
        return record

    def check_before(self, offset: int, lines: int) -> None:
        """Check the journal up to ``offset`` (what the state says it has applied: ``lines``
        lines) before a run appends to it; a problem raises StateCorruptError naming the line.

        The journal must reach ``offset``, end a line there and hold that many lines. Each
        line before it must be an event object: parsed when the journal is at most
        :data:`CHECK_LIMIT` bytes, checked for its shape (``{...}``, UTF-8) beyond that, so
        a long journal costs little to check.
        """
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size < offset:
                    raise StateCorruptError(
                        f"journal {self.path} is shorter ({size} bytes) than the state records "
                        f"({offset} bytes): it was cut or replaced; it was left untouched"
                    )
                prefix = handle.read(offset)
        except FileNotFoundError:
            if offset == 0:
                return
            raise StateCorruptError(
                f"journal {self.path} is missing although the state records {lines} line(s) "
                "of it; restore it (the state was left untouched)"
            ) from None
        if offset and not prefix.endswith(b"\n"):
            raise StateCorruptError(
                f"journal {self.path} does not end a line where the state's position is "
                f"(byte {offset}): it was edited; it was left untouched"
            )
        found = prefix.count(b"\n")
        if found != lines:
            raise StateCorruptError(
                f"journal {self.path} has {found} line(s) before the state's position, the "
                f"state records {lines}: it was edited; it was left untouched"
            )
        full = size <= CHECK_LIMIT
        for number, line in enumerate(prefix.split(b"\n")[:-1], start=1):
            if not line.strip():
                continue
            if full:
                self._decode(line, number)
            elif not (line.startswith(b"{") and line.rstrip().endswith(b"}")):
                raise StateCorruptError(
                    f"journal {self.path} line {number} is corrupt (not an event object); "
                    "it was left untouched"
                )
        if not full:
            try:
                prefix.decode("utf-8")
            except UnicodeDecodeError as exc:
                number = prefix.count(b"\n", 0, exc.start) + 1
                raise StateCorruptError(
                    f"journal {self.path} line {number} is corrupt (UnicodeDecodeError); "
                    "it was left untouched"
                ) from None

    def find(self, event: str, **match: Any) -> dict[str, Any] | None:
        """The last event named ``event`` whose fields equal ``match``."""
        found: dict[str, Any] | None = None
        for record in self.events():
            if record.get("event") == event and _matches(record, match):
                found = record
        return found


def _matches(record: Mapping[str, Any], match: Mapping[str, Any]) -> bool:
    return all(record.get(key) == value for key, value in match.items())
