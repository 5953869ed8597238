"""The record of an agent call's guarded files, on disk while the call runs.

What an agent changes of the files its call may not change (phasegate's own files, the
artifacts of other phases a workflow's view keeps from it) is put back when the call ends
(:mod:`phasegate.engine.protect`). A phasegate killed during the call (SIGKILL: an agent
with a shell can kill its parent) cannot do that then, so the record is also written to
``<workflow>--<item>.guard`` before the call begins (and the journal lines phasegate
appends meanwhile to ``<...>.guard.own``), in a folder of the repository's own under
phasegate's user cache folder (:func:`~phasegate.repo_paths.user_cache_dir`): outside
every work tree, so an agent working there can neither forge it (the next run would
write its bytes) nor remove it (its changes would stay). A ``.guard`` file found in
``.phasegate/locks/`` (where records are not kept) is not phasegate's: it is removed
unread, and the user told in one line. The record is appended to, a
line per call holding what changed since the line before (unchanged files by name, a file
that only grew by what it gained), and a line saying when the calls' changes were put back;
it is removed when the run ends. The next run of the item, before it reads or dispatches
anything, finds them and puts back what differs from them, as the killed run would have:
changed files get their old bytes, new files in ``.phasegate/`` are removed (and those
new in a folder a view keeps from the call, :class:`FolderFiles`), journal lines
phasegate did not write are cut out. It says so in one line and journals
``guard.restored``. What the files held is copied to
``.phasegate/cache/put-back/after-kill/`` first (a person's edit made after the kill is
not lost). Without such a record (no run was killed during a call), a file changed
while no run goes on is a person's edit, and kept.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from phasegate.engine.item import WorkItem
from phasegate.engine.protect_cache import ReadCache, _Copy, _JournalRecord
from phasegate.engine.protect_snapshot import Snapshot, event_names, item_file_paths
from phasegate.errors import StorageError, is_storage_error
from phasegate.repo_paths import CACHE_DIR, CONFIG_DIR, LOCKS_DIR, user_cache_dir

#: Where what the files held when a record was put back is copied, below ``.phasegate/``.
KEPT_DIR = f"{CACHE_DIR}/put-back/after-kill"


#: The folder under phasegate's user cache folder holding the records, a folder per repository.
RECORDS_DIR = "guard"


@dataclass(frozen=True)
class FolderFiles(_Copy):
    """A folder a view keeps from a call, as its files and folders below it (``names``,
    absolute paths) when the call began: a run killed during the call has what is new
    there removed by the next run, as the view would have when the call ended."""

    kind: Literal["absent", "file", "link", "other"] = "other"
    names: frozenset[str] = field(default_factory=frozenset)
    #: Whether the folder was a link or a file then (a person's: nothing is removed).
    not_folder: bool = False

    @classmethod
    def of(cls, folder: Path) -> FolderFiles:
        """``folder``'s files, links and folders below it now."""
        top = os.fspath(folder)
        not_folder = os.path.lexists(top) and (os.path.islink(top) or not os.path.isdir(top))
        return cls(names=frozenset(_below(top)), not_folder=not_folder)


def _below(top: str) -> Iterable[str]:
    """The files, links and folders below ``top`` (a link is not followed, ``top`` itself
    only when it is a real folder)."""
    if not os.path.isdir(top) or os.path.islink(top):
        return
    for folder, folders, names in os.walk(top):
        for name in (*folders, *names):
            yield os.path.join(folder, name)


def record_folder(repo: Path) -> Path:
    """Where the records of ``repo``'s items are kept: outside every work tree, in a folder
    of the user cache folder named for the repository's path and its folder's identity (a
    repository made again at the same path is another one: an old record is not its)."""
    real = os.path.realpath(repo)
    try:
        info = os.stat(real)
        identity = f"{real}\0{info.st_dev}\0{info.st_ino}"
    except OSError:
        identity = real
    key = hashlib.sha256(os.fsencode(identity)).hexdigest()[:16]
    return user_cache_dir() / RECORDS_DIR / f"{Path(real).name}-{key}"


def record_path(item: WorkItem) -> Path:
    """The item's record of a running call's guarded files."""
    return record_folder(item.repo) / f"{item.workflow.name}--{item.name}.guard"


def _work_tree_records(item: WorkItem) -> list[Path]:
    """Files named as the item's record in ``.phasegate/locks/``, where no record is kept
    (an agent's, or one an older phasegate left): never read."""
    name = f"{item.workflow.name}--{item.name}.guard"
    folder = item.repo / CONFIG_DIR / LOCKS_DIR
    return [p for p in (folder / name, folder / f"{name}.own") if os.path.lexists(p)]


def _own_path(item: WorkItem) -> Path:
    return record_path(item).with_name(record_path(item).name + ".own")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class PendingRecord:
    """The on-disk copy of a guard's record while calls run."""

    def __init__(self, item: WorkItem) -> None:
        self.item = item
        self.path = record_path(item)
        self._own: IO[bytes] | None = None
        #: The record file, kept open while the run goes on: each write appends one line
        #: (see :func:`_read_log`), so a call's record costs what changed since the last.
        self._log: IO[bytes] | None = None
        self._log_size = 0
        #: The files as the record's last line says (what the next line is written against).
        self._written: dict[str, _Copy] = {}
        #: The journal's size, inode and last bytes as the record's last line says.
        self._journal: tuple[int, int, bytes] | None = None
        self._ended = True

    def write(self, snapshot: Snapshot, extra: Mapping[str, _Copy]) -> None:
        """Write ``snapshot`` (and ``extra`` files a view keeps from the running calls)."""
        record = snapshot.record
        assert record is not None and snapshot.journal is not None
        folders = {p: c for p, c in extra.items() if isinstance(c, FolderFiles)}
        files = {**snapshot.files, **{p: c for p, c in extra.items() if p not in folders}}
        folders = {p: c for p, c in folders.items() if not c.not_folder}
        fresh = self._log is None or self._log_size > LOG_LIMIT
        if fresh:
            self._written = {}
            self._journal = None
        document: dict[str, Any] = {
            "files": [_entry(p, c, self._written.get(p)) for p, c in files.items()],
            "config_dir": os.fspath(snapshot.config_dir) if snapshot.config_dir else None,
            "config_was_folder": snapshot.config_was_folder,
            "exempt": sorted(snapshot.exempt),
            "item_dirs": sorted(snapshot.item_dirs),
            "git_dir": snapshot.git_dir,
            "journal": os.fspath(snapshot.journal),
            "size": record.size,
            "inode": record.inode,
            **_tail_entry(self._journal, record.size, record.inode, record.tail),
        }
        if folders:
            document["folders"] = {p: sorted(c.names) for p, c in folders.items()}
        line = json.dumps(document).encode("utf-8") + b"\n"
        if fresh:
            self._close_log()
            _write_whole(self.path, line)
            try:
                self._log = open(self.path, "ab")  # noqa: SIM115 (open while the run goes on)
            except OSError:
                self._log = None  # the next write makes it whole again
            self._log_size = len(line)
        else:
            self._append(line)
        self._written = files
        self._journal = (record.size, record.inode, record.tail)
        self._ended = False
        if self._own is not None:
            self._close_own()
            _own_path(self.item).unlink(missing_ok=True)
        self.own(bytes(record.own))

    def own(self, line: bytes) -> None:
        """phasegate appended ``line`` to the journal (kept in the ``.own`` file, made at
        the first line: most calls see none)."""
        if not line:
            return
        try:
            if self._own is None:
                own = _own_path(self.item)
                own.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                self._own = open(own, "wb")  # noqa: SIM115 (open while calls run)
            self._own.write(line)
            self._own.flush()
        except OSError:
            pass  # the journal's own append stands; only a killed run's record lacks it

    def _close_own(self) -> None:
        if self._own is not None:
            self._own.close()
            self._own = None

    def _append(self, line: bytes) -> None:
        assert self._log is not None
        try:
            self._log.write(line)
            self._log.flush()
        except OSError as exc:
            self._close_log()  # a line half written: the next write makes the record whole
            if is_storage_error(exc):
                raise StorageError.from_os_error(exc, self.path) from exc
            raise
        self._log_size += len(line)

    def _close_log(self) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

    def writing(self) -> None:
        """phasegate begins writing the item's state files while calls run (one line: a run
        killed before the line of what it wrote leaves them as it wrote them, its own)."""
        if self._log is not None and not self._ended:
            self._append(WRITING)

    def ended(self) -> None:
        """The calls' changes are put back: the record says no call runs (one line; the
        file itself goes with the run, :meth:`close`)."""
        if self._own is not None:
            self._close_own()
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                _own_path(self.item).unlink()
        self._ended = True
        if self._log is not None:
            try:
                self._append(ENDED)
            except (OSError, StorageError):
                self.remove()  # no line can say it: no record is left

    def close(self) -> None:
        """The run ends: its record goes, unless a call's changes were never put back."""
        self._close_log()
        self._written, self._journal = {}, None
        if self._ended:
            self.remove()

    def remove(self) -> None:
        """No record is left."""
        self._close_log()
        self._written, self._journal = {}, None
        if self._own is not None:
            self._close_own()
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                _own_path(self.item).unlink()
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self.path.unlink()
        with contextlib.suppress(OSError):  # the repository's folder, when no record is left
            self.path.parent.rmdir()


#: The record's line saying that no call runs (every call's changes were put back).
ENDED = b'{"ended": true}\n'

#: The record's line saying that phasegate is writing the item's state files (the line
#: recording them as it wrote them follows).
WRITING = b'{"writing": true}\n'

#: Past this size the record is written whole again (a long run's lines add up).
LOG_LIMIT = 4 << 20


def _entry(path: str, copy: _Copy, was: _Copy | None) -> list[Any]:
    """One file of a record line: ``[path]`` when it is as the line before said;
    ``[path, kind, mode, None, kept, kept_end, middle]`` when only its middle changed (its
    first ``kept`` and last ``kept_end`` bytes are the line before's: a history or archive
    that grew, a state file with a field changed); else ``[path, kind, mode, content]``."""
    if was is not None and (was is copy or was == copy):
        return [path]
    if was is not None and was.kind == copy.kind == "file" and was.mode == copy.mode:
        old, new = was.content, copy.content
        kept = _same_start(old, new)
        kept_end = _same_end(old, new, min(len(old), len(new)) - kept)
        middle = new[kept : len(new) - kept_end]
        if len(middle) * 2 < len(new):
            return [path, copy.kind, copy.mode, None, kept, kept_end, _b64(middle)]
    return [path, copy.kind, copy.mode, _b64(copy.content)]


def _same_start(a: bytes, b: bytes) -> int:
    """How many first bytes ``a`` and ``b`` share (found by halving: slices compare in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _same_end(a: bytes, b: bytes, limit: int) -> int:
    """How many last bytes (at most ``limit``) ``a`` and ``b`` share."""
    low, high = 0, max(0, limit)
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid : len(a) - low] == b[len(b) - mid : len(b) - low]:
            low = mid
        else:
            high = mid - 1
    return low


def _tail_entry(
    was: tuple[int, int, bytes] | None, size: int, inode: int, tail: bytes
) -> dict[str, Any]:
    """The journal's last bytes in a record line: ``tail`` whole, or, when the line before
    gave the same journal shorter, only the bytes appended since (``tail_added``; the tail
    is the line before's with them, cut to ``tail_length``)."""
    if was is not None and tail and was[1] == inode and 0 <= size - was[0] <= len(tail):
        added = tail[len(tail) - (size - was[0]) :]
        if (was[2] + added)[-len(tail) :] == tail:
            return {"tail_added": _b64(added), "tail_length": len(tail)}
    return {"tail": _b64(tail)}


def _read_log(raw: bytes) -> tuple[dict[str, Any] | None, dict[str, _Copy]]:
    """The record's lines read in order: the last line's document (None when it says no
    call runs; its ``tail`` the journal's last bytes, put together) and the files as it
    says them. A line cut short (a run killed while it wrote it, before the call it was
    for began) ends the reading."""
    document: dict[str, Any] | None = None
    files: dict[str, _Copy] = {}
    tail = b""
    for line in raw.split(b"\n"):
        if not line:
            continue
        try:
            found = json.loads(line)
        except ValueError:
            break
        if not isinstance(found, dict):
            raise ValueError("not a record line")
        if found.get("ended"):
            document = None
            continue
        if found.get("writing"):
            if document is not None:
                document["writing"] = True
            continue
        now: dict[str, _Copy] = {}
        for entry in found["files"]:
            path = str(entry[0])
            if len(entry) == 1:
                now[path] = files[path]
            elif entry[3] is None:
                was = files[path].content
                kept, kept_end = int(entry[4]), int(entry[5])
                if kept + kept_end > len(was):
                    raise ValueError("a record line keeps more than the line before held")
                content = was[:kept] + base64.b64decode(entry[6]) + was[len(was) - kept_end :]
                now[path] = _Copy(entry[1], content, int(entry[2]))
            else:
                now[path] = _Copy(entry[1], base64.b64decode(entry[3]), int(entry[2]))
        if "tail" in found:
            tail = base64.b64decode(found["tail"])
        else:
            tail = (tail + base64.b64decode(found["tail_added"]))[-int(found["tail_length"]) :]
        found["tail"] = tail
        files, document = now, found
    return document, files


def _write_whole(path: Path, data: bytes) -> None:
    """``path`` replaced by ``data`` whole (a temp file renamed over it), as
    :func:`~phasegate.state.atomic.atomic_write_bytes` does, without its fsync: the record
    is there for a process killed during a call, not for a power cut, and it is written
    before every call (an fsync would cost more than the rest of the call's bookkeeping)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        try:
            handle = open(tmp, "wb")  # noqa: SIM115 (closed below)
        except FileNotFoundError:  # the first record of this repository (or cache cleared)
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle = open(tmp, "wb")  # noqa: SIM115
        with handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if is_storage_error(exc):
            raise StorageError.from_os_error(exc, path) from exc
        raise


def _snapshot(
    item: WorkItem, document: dict[str, Any], files: dict[str, _Copy], own: bytes
) -> Snapshot:
    record = _JournalRecord(
        int(document["size"]), int(document["inode"]), bytes(document["tail"]), None
    )
    record.own = bytearray(own)
    config_dir = document.get("config_dir")
    return Snapshot(
        files=files,
        config_dir=Path(config_dir) if config_dir else None,
        exempt=frozenset(document.get("exempt") or ()),
        journal=Path(document["journal"]),
        record=record,
        item_dirs=frozenset(document.get("item_dirs") or ()),
        cache=ReadCache(),
        item=item,
        git_dir=document.get("git_dir"),
        config_was_folder=bool(document.get("config_was_folder")),
    )


def put_back_pending(item: WorkItem) -> list[str]:
    """A record left by a run killed during an agent call: what differs from it put back
    (said on stderr, journaled as ``guard.restored``); the paths put back."""
    _drop_work_tree_records(item)
    path = record_path(item)
    for stale in path.parent.glob(f".{path.name}.tmp-*"):  # a run killed while writing it
        stale.unlink(missing_ok=True)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        _own_path(item).unlink(missing_ok=True)
        return []
    try:
        own = _own_path(item).read_bytes()
    except FileNotFoundError:
        own = b""
    try:
        document, files = _read_log(raw)
        if document is None:  # every call's changes were put back: nothing to do
            PendingRecord(item).remove()
            return []
        snapshot = _snapshot(item, document, files, own)
    except (ValueError, KeyError, TypeError, IndexError, binascii.Error):
        # Not one phasegate wrote: nothing it says can be trusted.
        PendingRecord(item).remove()
        return []
    if document.get("writing"):
        # Killed while phasegate wrote the item's state (calls running): what it wrote is
        # its own, not an agent's change (the agents' were put back just before).
        snapshot.refresh(item_file_paths(item, snapshot.cache))
    if snapshot.config_dir is not None and snapshot.config_dir.is_dir():
        # A work item made since (``phasegate new`` of a workflow keeping its items under
        # ``.phasegate/``) is that item's, not the agent's.
        found = snapshot.cache.layout(snapshot.config_dir, item).item_dirs
        snapshot.item_dirs |= found
    changed = snapshot.changed_files()
    added = _added(document.get("folders"), snapshot.files)
    _keep_copies(item, snapshot, [*added, *changed])
    _remove(added)
    snapshot.restore(changed)
    # A new folder is named by the new files in it.
    changed = [p for p in added if not any(q.startswith(p + os.sep) for q in added)] + changed
    journal, forged = snapshot.settle_journal()
    shown = [_shown(item.repo, p) for p in changed]
    if journal:
        shown.append(_shown(item.repo, item.journal.path))
    PendingRecord(item).remove()
    if not shown:
        return []
    kept = item.repo / CONFIG_DIR / KEPT_DIR
    sys.stderr.write(
        "phasegate: an earlier run was killed during an agent call; what the agent changed "
        f"of files it may not change was put back ({', '.join(shown)}); what they held is "
        f"copied in {_shown(item.repo, kept)}/\n"
    )
    sys.stderr.flush()
    item.record(
        "guard.restored",
        paths=shown,
        forged_events=event_names(forged),
        forged_lines=forged[:5],
        sync_now=True,
    )
    return shown


def _added(folders: Any, recorded: Mapping[str, _Copy]) -> list[str]:
    """What is new below the record's ``folders`` (folder -> what was below it), deepest
    first; a folder replaced by a link or a file is itself new."""
    if not isinstance(folders, dict):
        return []
    added: list[str] = []
    for top, names in folders.items():
        was = set(map(str, names))
        if os.path.lexists(top) and (os.path.islink(top) or not os.path.isdir(top)):
            added.append(str(top))  # not followed: its files are not the folder's
            continue
        added += [p for p in _below(str(top)) if p not in was and p not in recorded]
    return sorted(set(added), key=lambda p: (-p.count(os.sep), p))


def _remove(paths: list[str]) -> None:
    """``paths`` removed (a folder once what was new in it is: only new things are in it)."""
    for path in paths:
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)


def _drop_work_tree_records(item: WorkItem) -> None:
    """Remove unread what poses as the item's record in the work tree (said in one line)."""
    found = _work_tree_records(item)
    for path in found:
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    if found:
        named = " and ".join(_shown(item.repo, p) for p in found)
        verb = "is" if len(found) == 1 else "are"
        sys.stderr.write(
            f"phasegate: {named} {verb} not written by phasegate (it keeps its record of "
            "agent calls outside the work tree): ignored and removed\n"
        )
        sys.stderr.flush()


def _keep_copies(item: WorkItem, snapshot: Snapshot, changed: list[str]) -> None:
    """What the ``changed`` files hold now, copied below :data:`KEPT_DIR`."""
    kept = item.repo / CONFIG_DIR / KEPT_DIR
    for path in changed:
        now = snapshot.cache.read(path)
        if now.kind != "file":
            continue
        target = kept / _shown(item.repo, path).lstrip("/")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(now.content)
        except OSError:
            continue  # a copy is a courtesy: the record is put back regardless


def _shown(repo: Path, path: str | Path) -> str:
    try:
        return Path(path).relative_to(repo).as_posix()
    except ValueError:
        return str(path)
