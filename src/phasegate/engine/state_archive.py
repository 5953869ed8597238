"""The engine state's archive: what an item finished with, out of the file committed each step.

A state commit replaces ``.engine.json`` at every step, so that file must not
grow with the item's history. Nodes the walk has finished with (completed,
and not changed for one commit) and the item's label history are appended
instead to ``.engine-archive.jsonl`` beside it, one JSON object per line:

- ``{"node": PATH, "state": {...}}``: the node's state as it was finished
  (a later line for the same path replaces an earlier one);
- ``{"node": PATH, "dropped": true}``: the node was forgotten (a restarted
  foreach item);
- ``{"history": {...}}``: one entry of the label history, in order;
  ``{"history": null}`` empties the history before the entries after it.

The state file says how many bytes of the archive it goes with
(``"archive": {"bytes": N}``): the archive is appended to (and flushed)
before the state file is replaced, so a reader of the state file finds at
least those bytes, and lines after them, left by a process killed between
the two writes, are ignored and cut off by the next commit. A node that
changes again is written to the state file again, where it takes
precedence over its archived line until it is finished again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.errors import StateCorruptError, StorageError, is_storage_error, os_reason

ARCHIVE_FILE = ".engine-archive.jsonl"


@dataclass
class Archived:
    """What the first ``size`` bytes of an archive hold."""

    #: Node path -> its archived state (dropped nodes removed).
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: list[Any] = field(default_factory=list)


def archive_path(state_file: Path) -> Path:
    """The archive that goes with the state file ``state_file``."""
    return state_file.parent / ARCHIVE_FILE


def read_archive(state_file: Path, size: int) -> Archived:
    """The first ``size`` bytes of ``state_file``'s archive, decoded.

    Raises :class:`StateCorruptError` naming the archive when it is missing,
    shorter than ``size`` or holds a line that is not an archive record.
    """
    found = Archived()
    if size <= 0:
        return found
    path = archive_path(state_file)
    hint = "it was left untouched; restore it (e.g. from git) or fix it by hand"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(size)
    except FileNotFoundError:
        raise StateCorruptError(
            f"archive {path} is missing, but state file {state_file} goes with its first "
            f"{size} bytes; {hint}"
        ) from None
    except OSError as exc:
        raise StateCorruptError(f"archive {path} cannot be read: {os_reason(exc)}") from None
    if len(raw) < size:
        raise StateCorruptError(
            f"archive {path} holds {len(raw)} bytes, but state file {state_file} goes with "
            f"its first {size}; {hint}"
        )
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        problem = _apply(found, line)
        if problem:
            raise StateCorruptError(f"archive {path} line {number}: {problem}; {hint}")
    return found


def _apply(found: Archived, line: bytes) -> str | None:
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "not a JSON object"
    if not isinstance(record, dict):
        return "not a JSON object"
    if "history" in record:
        if record["history"] is None:
            found.history.clear()
        else:
            found.history.append(record["history"])
        return None
    path = record.get("node")
    if not isinstance(path, str):
        return "neither a node nor a history entry"
    if record.get("dropped") is True:
        found.nodes.pop(path, None)
        return None
    state = record.get("state")
    if not isinstance(state, dict):
        return f"node {path!r} has no state object"
    found.nodes[path] = state
    return None


def append_archive(state_file: Path, expected: int, payload: bytes) -> int:
    """Append ``payload`` to ``state_file``'s archive, which the state says is ``expected``
    bytes long; the archive's new length.

    Bytes after ``expected`` were left by a process killed before it replaced the
    state file: they are cut off first. An archive shorter than ``expected`` is
    corrupt. The archive is fsync'd (once per finished node, not per step): the
    state file replaced next must never go with bytes a power cut can lose.
    """
    path = archive_path(state_file)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
        try:
            size = os.fstat(fd).st_size
            if size < expected:
                raise StateCorruptError(
                    f"archive {path} holds {size} bytes, but state file {state_file} goes "
                    f"with its first {expected}; it was left untouched; restore it (e.g. "
                    "from git) or fix it by hand"
                )
            if size > expected:
                os.ftruncate(fd, expected)
            view = memoryview(payload)
            offset = expected
            while view:
                written = os.pwrite(fd, view, offset)
                view, offset = view[written:], offset + written
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        if is_storage_error(exc):
            raise StorageError.from_os_error(exc, path) from exc
        raise
    return expected + len(payload)


class ArchivePlan:
    """What a commit appends to the archive (see :meth:`EngineState.settle`)."""

    __slots__ = ("history", "nodes", "payload", "texts")

    def __init__(self) -> None:
        self.payload = b""
        #: The node paths archived by it.
        self.nodes: list[str] = []
        #: How many history entries the archive holds after it.
        self.history = 0
        #: Node path -> its archived JSON (kept only while encodings are checked).
        self.texts: dict[str, str] = {}
