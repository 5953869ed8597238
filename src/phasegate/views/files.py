"""The files a state view writes at every state commit, written at the least cost.

A view's files are derived from the engine state (a run writes them again),
so they are replaced without fsync, but still atomically: a reader sees the
old file or the new one, never a mix. :class:`ViewFile` remembers the bytes
it last wrote and the identity (inode, size, modification time) of the file
it left: a write of the same bytes is skipped while the file is still the
one written, and done again when someone edited, replaced or deleted it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from phasegate.errors import StorageError, is_storage_error
from phasegate.faults import crash_point

#: ``json.dumps(value, ensure_ascii=False)``, without building an encoder at every call.
encode_json = json.JSONEncoder(ensure_ascii=False).encode

#: (inode, size, modification time in ns) of a file.
Identity = tuple[int, int, int]


def _identity(path: str) -> Identity | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


class ViewFile:
    """One file of a view: replaced atomically, and only when its bytes change."""

    __slots__ = ("_folder", "_identity", "_temp_prefix", "path", "written")

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        folder, _, name = self.path.rpartition(os.sep)
        self._folder = folder or "."
        # The temp file's name is the one atomic writes use (``.NAME.tmp-PID-HEX``), so
        # a run that finds one left by a killed process removes it.
        self._temp_prefix = f"{folder}{os.sep}.{name}.tmp-" if folder else f".{name}.tmp-"
        #: The bytes this process last wrote to the file (``None``: not known).
        self.written: bytes | None = None
        self._identity: Identity | None = None

    def known(self, data: bytes) -> None:
        """The file was read and holds ``data`` (a write of the same bytes can be skipped)."""
        self.written = data
        self._identity = _identity(self.path)

    def forget(self) -> None:
        """What the file holds is no longer known (it was deleted or is to be compared)."""
        self.written = None
        self._identity = None

    def write(self, data: bytes) -> bool:
        """Replace the file with ``data`` unless it holds them already; whether it wrote."""
        unchanged = data == self.written and self._identity is not None
        if unchanged and _identity(self.path) == self._identity:
            return False
        self._replace(data)
        return True

    def _replace(self, data: bytes) -> None:
        tmp = f"{self._temp_prefix}{os.getpid()}-{os.urandom(4).hex()}"
        try:
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileNotFoundError:
                os.makedirs(self._folder, exist_ok=True)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    found = os.fstat(fd)
                finally:
                    os.close(fd)
                crash_point("atomic.before_replace")
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                self.forget()
                raise
        except OSError as exc:
            if is_storage_error(exc):
                raise StorageError.from_os_error(exc, Path(self.path)) from exc
            raise
        self.written = data
        # The rename keeps the inode, size and modification time the temp file had.
        self._identity = (found.st_ino, found.st_size, found.st_mtime_ns)

    def append(self, data: bytes) -> bool:
        """Append ``data`` (one write) to the file as this process last wrote it; ``False``
        (nothing written) when it is not that file any more, or the append failed."""
        if self.written is None or _identity(self.path) != self._identity:
            return False
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError:
            return False
        try:
            os.write(fd, data)
            found = os.fstat(fd)
        except OSError as exc:
            self.forget()
            if is_storage_error(exc):
                raise StorageError.from_os_error(exc, Path(self.path)) from exc
            return False
        finally:
            os.close(fd)
        self.written += data
        self._identity = (found.st_ino, found.st_size, found.st_mtime_ns)
        return True
