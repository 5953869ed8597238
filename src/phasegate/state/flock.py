"""A cheap exclusive file lock for the state commit path.

The item's write lock is taken for every state commit, so what it costs is
paid on every step: ``fcntl.flock`` on the lock file, re-entrant within the
process (a thread that holds it may take it again; other threads wait), and
released by closing the file. It is the same kind of lock ``filelock`` takes
on POSIX, so processes using either exclude each other.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from types import TracebackType

#: How often a waiting process tries the lock again.
POLL_SECONDS = 0.01


class LockTimeout(Exception):
    """The lock was not free within the timeout."""


class FileLock:
    """An exclusive lock on ``path``, waiting at most ``timeout`` seconds for it."""

    def __init__(self, path: Path | str, timeout: float) -> None:
        self.path = str(path)
        self.timeout = timeout
        self._local = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (again, if this thread holds it); :class:`LockTimeout` if busy."""
        if not self._local.acquire(timeout=self.timeout if self.timeout >= 0 else -1):
            raise LockTimeout(self.path)
        if self._depth == 0:
            try:
                self._fd = _take(self.path, self.timeout)
            except BaseException:
                self._local.release()
                raise
        self._depth += 1

    def release(self) -> None:
        """Give the lock back (the file lock goes when the outermost holder releases)."""
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the file releases the flock
        self._local.release()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _take(path: str, timeout: float) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + max(0.0, timeout)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise LockTimeout(path) from None
            time.sleep(POLL_SECONDS)
        except BaseException:
            os.close(fd)
            raise
