"""Crash-safe file writes: temp file, fsync, ``os.replace``, fsync of the directory.

A write the file system refuses (disk full, I/O error, read-only, no
permission) raises :class:`~phasegate.errors.StorageError` naming the file,
and leaves the old file as it was and no temp file behind.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import secrets
from pathlib import Path

from phasegate.errors import StorageError, is_storage_error
from phasegate.faults import crash_point
from phasegate.state.fs_order import replace_keeps_data

MASK = 0xFFFFFFFF


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry so a rename in it survives a power cut."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    ``durable=False`` (a step commit) skips the fsync of the folder, and the
    file's own fsync where the file system writes a renamed file's data before
    the rename over the old file (ext4: see :mod:`phasegate.state.fs_order`):
    still atomic against a killed process, and after a power cut the old file
    or the new one, never an empty one; only the last renames may be lost (a
    step commit's state is replayed from the fsync'd journal).
    """
    target = os.fspath(path)
    folder, name = os.path.split(target)
    try:
        try:
            fd, tmp = _create_temp(folder, name)
        except FileNotFoundError:
            os.makedirs(folder or ".", exist_ok=True)
            fd, tmp = _create_temp(folder, name)
        try:
            try:
                view = memoryview(data)
                while view:  # a nearly full disk may take only part of it
                    view = view[os.write(fd, view) :]
                if durable or not _replace_keeps_data(folder, target):
                    os.fsync(fd)
            finally:
                os.close(fd)
            crash_point("atomic.before_replace")
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        if durable:
            fsync_dir(path.parent)
    except OSError as exc:
        if is_storage_error(exc):
            raise StorageError.from_os_error(exc, path) from exc
        raise


def _replace_keeps_data(folder: str, target: str) -> bool:
    """Whether renaming a new file to ``target`` needs no fsync to reach the disk whole:
    it replaces an old file on a file system that writes the new data first."""
    return replace_keeps_data(folder) and os.path.lexists(target)


#: Temp names are unique within this process by a counter (and across processes by pid).
_temp_numbers = itertools.count(secrets.randbits(32))


def _create_temp(folder: str, name: str) -> tuple[int, str]:
    """A new temp file beside ``name`` (``.name.tmp-PID-HEX``), opened for writing."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}-{next(_temp_numbers) & MASK:08x}")
        try:
            return os.open(tmp, flags, 0o666), tmp  # as open(): the umask applies
        except FileExistsError:
            continue  # left behind by a process that had this pid before: another name


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Text flavour of :func:`atomic_write_bytes` (UTF-8)."""
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def remove_file(path: Path) -> bool:
    """Delete ``path`` durably if it exists; return whether it existed."""
    try:
        path.unlink()
        fsync_dir(path.parent)
    except FileNotFoundError:
        return False
    except OSError as exc:
        if is_storage_error(exc):
            raise StorageError.from_os_error(exc, path, action="delete") from exc
        raise
    return True


#: The temp file :func:`atomic_write_bytes` writes beside ``name`` (``.name.tmp-PID-HEX``).
_TEMP_FILE = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)-[0-9a-f]{8}$")


def remove_leftover_temp_files(
    folder: Path, name: str | None = None, *, recursive: bool = False
) -> list[Path]:
    """Remove the temp files killed atomic writes left in ``folder`` (of ``name`` only, if
    given; in subfolders too with ``recursive``); the ones removed.

    A temp file of a process still running (another phasegate writing now) is kept.
    """
    if not folder.is_dir():
        return []
    candidates = folder.rglob(".*.tmp-*") if recursive else folder.glob(".*.tmp-*")
    removed: list[Path] = []
    for path in candidates:
        found = _TEMP_FILE.match(path.name)
        if found is None or (name is not None and found["name"] != name):
            continue
        if _running(int(found["pid"])) or not path.is_file():
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process writes one file at a time: a leftover is from before
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
