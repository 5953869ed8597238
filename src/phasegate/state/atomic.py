"""Crash-safe file writes: temp file, fsync, ``os.replace``, fsync of the directory.

A write the file system refuses (disk full, I/O error, read-only, no
permission) raises :class:`~phasegate.errors.StorageError` naming the file,
and leaves the old file as it was and no temp file behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from phasegate.errors import StorageError, is_storage_error
from phasegate.faults import crash_point


def fsync_dir(directory: Path) -> None:
    """Flush a directory entry so a rename in it survives a power cut."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    ``durable=False`` skips the fsyncs: still atomic against a killed process,
    for files that can be rebuilt from durable state after a power cut.
    """
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(tmp, "xb") as handle:
                handle.write(data)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
            crash_point("atomic.before_replace")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        if durable:
            fsync_dir(path.parent)
    except OSError as exc:
        if is_storage_error(exc):
            raise StorageError.from_os_error(exc, path) from exc
        raise


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
