"""A record of phasegate's own files, and putting them back as recorded.

What :mod:`phasegate.engine.protect` keeps while agent calls run: the files of
the repository's ``.phasegate/`` folder and the work item's state files by
content, and the journal by its length, last bytes (all of it when short) and
the lines phasegate appended since. Paths are kept as strings (joined from the
item's paths as given); files unchanged since the last record are known from
:class:`~phasegate.engine.protect_cache.ReadCache` by their signature.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from phasegate.engine.item import WorkItem
from phasegate.engine.plugin_api import StateView
from phasegate.engine.protect_cache import (
    ABSENT,
    JOURNAL_COPY_LIMIT,
    JOURNAL_TAIL,
    SETTLED_NS,
    ReadCache,
    _Copy,
    _JournalRecord,
    _read_from,
    _tail_at,
)
from phasegate.engine.protect_walk import UNPROTECTED_DIRS, git_common_dir, git_run_files
from phasegate.engine.state import read_state_file
from phasegate.errors import StateCorruptError
from phasegate.state.atomic import atomic_write_bytes

__all__ = [
    "EXTERNAL_EVENTS",
    "JOURNAL_COPY_LIMIT",
    "JOURNAL_TAIL",
    "SETTLED_NS",
    "ReadCache",
    "Snapshot",
    "event_name",
    "event_names",
    "item_file_paths",
    "item_files",
    "put_back",
]

#: Events other phasegate commands journal while a run goes on (``phasegate answer``, the
#: dashboard): kept when found among the lines added during a call, if they answer a decision
#: the committed state holds as pending (those commands answer nothing else). An agent that
#: can run ``phasegate answer`` gains nothing by writing such a line itself; one answering a
#: gate not yet asked is forged, cut out like any line phasegate did not write.
EXTERNAL_EVENTS = frozenset({"decision.answered"})


@dataclass
class Snapshot:
    """phasegate's own files as phasegate last left them."""

    files: dict[str, _Copy] = field(default_factory=dict)
    #: The folder whose new files count as changes (``.phasegate/``).
    config_dir: Path | None = None
    #: Files under ``config_dir`` that are not phasegate's (a backend's own log), absolute.
    exempt: frozenset[str] = frozenset()
    journal: Path | None = None
    record: _JournalRecord | None = None
    #: Work-item folders inside ``config_dir`` (a workflow may keep its items there): this
    #: item's files are recorded as its state files, other items' are their runs' own.
    #: Found when the record is taken, so a folder an agent makes to look like one is not.
    item_dirs: frozenset[str] = frozenset()
    #: Files as last read (kept from one snapshot to the next by the item's guard).
    cache: ReadCache = field(default_factory=ReadCache)
    item: WorkItem | None = None
    #: The git repository's folder whose ``config`` and ``hooks/`` are recorded (a hook an
    #: agent leaves would run at phasegate's next git command, or the person's).
    git_dir: str | None = None
    #: Whether ``config_dir`` was a real folder (not a link) when recorded: one an agent
    #: replaced by a link (to a copy with files added) is put back as a folder.
    config_was_folder: bool = False

    @classmethod
    def take(
        cls, item: WorkItem, exempt: Iterable[Path] = (), cache: ReadCache | None = None
    ) -> Snapshot:
        """Record ``item``'s state files, its journal and the repository's ``.phasegate/``."""
        cache = cache if cache is not None else ReadCache()
        config_dir = cache.config_dir(item.repo)
        snapshot = cls(
            config_dir=config_dir,
            exempt=frozenset(os.path.abspath(p) for p in exempt) if exempt else frozenset(),
            journal=item.journal.path,
            cache=cache,
            item=item,
        )
        snapshot.config_was_folder = _is_folder(config_dir)
        layout = snapshot.cache.layout(config_dir, item)
        snapshot.item_dirs = layout.item_dirs
        read = snapshot.cache.read
        files = snapshot.files
        for path in snapshot._unexempt(layout.files, layout.absolute):
            files[path] = read(path)
        for path in item_file_paths(item, snapshot.cache):
            files[path] = read(path)
        snapshot.git_dir = git_common_dir(item.repo)
        if snapshot.git_dir is not None:
            for path in git_run_files(snapshot.git_dir, snapshot.cache.listing):
                files[path] = read(path)
        snapshot.record = snapshot.cache.journal(item.journal.path)
        return snapshot

    def _unexempt(self, files: tuple[str, ...], absolute: tuple[str, ...]) -> Iterable[str]:
        if not self.exempt:
            return files
        return [path for path, full in zip(files, absolute, strict=True) if full not in self.exempt]

    def config_files(self) -> Iterable[str]:
        """The files below ``config_dir`` now (without other items' and exempt files)."""
        assert self.config_dir is not None and self.item is not None
        layout = self.cache.layout(self.config_dir, self.item, self.item_dirs)
        return self._unexempt(layout.files, layout.absolute)

    def exempt_too(self, paths: Iterable[Path]) -> None:
        """Files a backend of a call that began later writes itself: no longer recorded."""
        more = frozenset(os.path.abspath(p) for p in paths) - self.exempt
        if more:
            self.exempt |= more
            for path in [p for p in self.files if os.path.abspath(p) in more]:
                del self.files[path]

    def refresh(self, paths: Iterable[str | Path]) -> None:
        """phasegate itself just wrote ``paths``: record them as they are now."""
        for item_path in paths:
            path = os.fspath(item_path)
            self.files[path] = self.cache.read(path)

    def changed_files(self) -> list[str]:
        """The recorded files that differ now, and files new in ``.phasegate/``."""
        read = self.cache.read
        changed: list[str] = []
        for path, was in self.files.items():
            now = read(path)
            if now is not was and now != was:
                changed.append(path)
        if self.config_dir is not None and self.config_was_folder and _replaced(self.config_dir):
            # A link (every file below it read through it) or a file: all are put back.
            top = os.fspath(self.config_dir)
            below = [p for p in self.files if p.startswith(top + os.sep) and p not in changed]
            return [top, *changed, *below]
        if self.config_dir is not None:
            files = self.files
            changed += [p for p in self.config_files() if p not in files]
        if self.git_dir is not None:
            hooks = git_run_files(self.git_dir, self.cache.listing)
            changed += [p for p in hooks if p not in self.files]
        return changed

    def journal_changed(self) -> bool:
        """Whether the journal holds anything phasegate did not write since the record."""
        assert self.journal is not None and self.record is not None
        was = self.record
        size = was.expected_size()
        try:
            info = os.lstat(self.journal)
        except (FileNotFoundError, NotADirectoryError):
            return size > 0
        if not stat.S_ISREG(info.st_mode) or info.st_size != size:
            return True
        if was.inode and info.st_ino != was.inode:
            return True
        return not was.is_expected_tail(_tail_at(self.journal, size))

    def restore(self, changed: list[str]) -> None:
        """Put the files in ``changed`` back as recorded."""
        for path in changed:
            if self.config_dir is not None and path == os.fspath(self.config_dir):
                _folder_back(self.config_dir)
                continue
            put_back(Path(path), self.files.get(path, ABSENT))

    def settle_journal(self) -> tuple[bool, list[str]]:
        """Make the journal the record plus phasegate's own lines (and answers other phasegate
        commands journaled meanwhile); whether an agent changed it, and the lines it added."""
        assert self.journal is not None and self.record is not None
        if not self.journal_changed():
            return False, []
        path, was = self.journal, self.record
        whole = was.whole
        intact = (
            _is_file(path)
            and path.stat().st_size >= was.size
            and _tail_at(path, was.size) == was.tail
            and (whole is None or _prefix(path, was.size) == whole)
        )
        if intact:  # only appended to: phasegate's lines stay, the others are cut out
            added = _read_from(path, was.size)
            kept, forged = _sort_lines(added, bytes(was.own), self._answers_pending)
            if kept != added:
                _rewrite_from(path, was.size, kept)
            was.own = bytearray(kept)
            was.inode = path.stat().st_ino
            return bool(forged) or kept != added, forged
        if whole is None:
            raise StateCorruptError(
                f"journal {path} was rewritten during an agent call and is too long to have "
                "been recorded whole; restore it from a backup (the run stopped here)"
            )
        content = whole + bytes(was.own)
        put_back(path, _Copy("file", content) if content else ABSENT)
        was.inode = path.stat().st_ino if content else 0
        return True, []

    def _answers_pending(self, line: bytes) -> bool:
        """Whether the journal ``line`` answers a decision the item's state (as phasegate
        committed it) holds as waiting, with one of its choices: what ``phasegate answer``
        journals. An answer to a gate not yet asked is no person's: it is forged."""
        try:
            event = json.loads(line)
            assert self.item is not None
            state = read_state_file(self.item.engine_path)
        except (ValueError, StateCorruptError):
            return False
        record = state.decisions.get(str(event.get("id")))
        return (
            isinstance(record, dict)
            and record.get("status") == "pending"
            and record.get("visit") == event.get("visit")
            and event.get("choice") in (record.get("choices") or {})
        )

    def own_append(self, line: bytes) -> None:
        """phasegate appended ``line`` to the journal."""
        assert self.journal is not None and self.record is not None
        if not self.record.inode:  # the journal was created by this append
            with contextlib.suppress(FileNotFoundError):
                self.record.inode = self.journal.stat().st_ino
        self.record.own += line


def item_files(item: WorkItem) -> list[Path]:
    """The item's state files: the engine's, its archive and its view's."""
    return [item.engine_path, item.archive_path, *item.view.files()]


def item_file_paths(item: WorkItem, cache: ReadCache) -> tuple[str, ...]:
    """:func:`item_files` as strings, kept in ``cache`` while they are bound to be the same:
    a view that does not define its own ``files`` writes the files it names from its
    settings in the item's folder."""
    view = item.view
    if type(view).files is not StateView.files:
        return tuple(os.fspath(path) for path in item_files(item))
    key = (id(view), os.fspath(item.item_dir), tuple(view.file_names(view.settings)))
    known = cache.item_files
    if known is not None and known[0] == key:
        return known[1]
    found = tuple(os.fspath(path) for path in item_files(item))
    cache.item_files = (key, found)
    return found


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _replaced(path: Path) -> bool:
    """Whether ``path`` (a folder when recorded) is now something else: a link, a file."""
    try:
        return not stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _folder_back(folder: Path) -> None:
    """``folder`` (``.phasegate/``), replaced by a link or a file, made a folder again: what
    is there is removed and the folders runs write themselves (their locks held by open
    files) are moved back from where a link pointed; the recorded files are then put back
    one by one."""
    linked = folder.is_symlink()
    target = Path(os.path.realpath(folder))
    folder.unlink()
    folder.mkdir()
    for name in sorted(UNPROTECTED_DIRS) if linked else ():
        with contextlib.suppress(OSError):
            if (target / name).is_dir() and not (target / name).is_symlink():
                os.rename(target / name, folder / name)


def _prefix(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(size)


def put_back(path: Path, was: _Copy) -> None:
    """Make ``path`` what it was, never writing through a link an agent put there."""
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if was.kind == "link":
        os.symlink(os.fsdecode(was.content), path)
    elif was.kind == "file":
        _folder_for(path)
        atomic_write_bytes(path, was.content, durable=True)
        os.chmod(path, was.mode)


def _folder_for(path: Path) -> None:
    """Make ``path``'s folder, removing a file an agent put in the place of one of its
    folders."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    except (FileExistsError, NotADirectoryError):
        pass
    for folder in reversed(path.parents):
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISDIR(folder.lstat().st_mode):
                folder.unlink()
                break
    path.parent.mkdir(parents=True, exist_ok=True)


def _rewrite_from(path: Path, offset: int, content: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(offset)
        handle.seek(offset)
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())


def _sort_lines(
    added: bytes, own: bytes, answers_pending: Callable[[bytes], bool]
) -> tuple[bytes, list[str]]:
    """Of the journal lines ``added`` since the record: those to keep (phasegate's ``own``,
    in order, and answers to pending decisions, journaled by other phasegate commands), and
    the others as text."""
    mine = own.splitlines(keepends=True)
    kept: list[bytes] = []
    forged: list[str] = []
    at = 0
    for line in added.splitlines(keepends=True):
        if at < len(mine) and line == mine[at]:
            kept.append(line)
            at += 1
        elif line.endswith(b"\n") and event_name(line) in EXTERNAL_EVENTS and answers_pending(line):
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
