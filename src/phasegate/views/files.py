"""The files a state view writes at every state commit, written at the least cost.

A view's files are derived from the engine state (a run writes them again),
so they are replaced without fsync, but still atomically: a reader sees the
old file or the new one, never a mix. :class:`ViewFile` remembers the bytes
it last wrote and the identity (inode, size, modification time) of the file
it left: a write of the same bytes is skipped while the file is still the
one written, and done again when someone edited, replaced or deleted it.
"""

from __future__ import annotations

import os
from pathlib import Path

from phasegate.errors import StorageError, is_storage_error
from phasegate.state.atomic import atomic_write_bytes
from phasegate.state.journal import encode_json as encode_json  # the views' encoder

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

    __slots__ = ("_identity", "_target", "path", "written")

    def __init__(self, path: Path) -> None:
        self._target = path
        self.path = str(path)
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
        # Derived from the engine state: a run writes it again, so no fsync.
        try:
            atomic_write_bytes(self._target, data, durable=False)
        except BaseException:
            self.forget()
            raise
        self.written = data
        # Another writer may replace it in between: then the next write is not skipped.
        self._identity = _identity(self.path)

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
                raise StorageError.from_os_error(exc, self._target) from exc
            return False
        finally:
            os.close(fd)
        self.written += data
        self._identity = (found.st_ino, found.st_size, found.st_mtime_ns)
        return True
