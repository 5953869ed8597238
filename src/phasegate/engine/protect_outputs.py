"""A call that may change only its outputs: whatever else it changed is put back.

An agent node with ``writes_only_outputs: true`` (the ``feature`` workflow's document
phases: brainstorm, specify, design, create-plan, create-tasks) lets its executor
change its declared outputs and nothing else. While such a call runs, the work tree
is kept on record: every file git reports changed or untracked (ignored files are
not looked at) and every file of the item's folder, by content. When the call ends,
what differs is put back: a changed file gets its old bytes (a file that was clean,
those git holds for it), a new file is removed, a removed one comes back; what each
held is copied to ``.phasegate/cache/put-back/<attempt>/`` first, so a person's edit
made meanwhile is not lost. The paths
are journaled as ``agent.violation`` (``outside_outputs``) and shown in the run's
progress. The call itself stands: what it was asked for is its outputs, and nothing
else it did survives (a scratch file, a ``__pycache__`` left by running the code, is
no reason to fail it).

Not on record: the outputs; phasegate's own files (``.phasegate/``, the item's state
files and journal: :mod:`phasegate.engine.protect` keeps those); the folders of
other work items; a file over :data:`RECORD_LIMIT` already changed or untracked when
the call began. While another item's run goes on in the same repository, a change
outside this item's folder cannot be told from that run's, so only the item's folder
is checked.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from phasegate.engine.item import WorkItem
from phasegate.engine.protect_cache import ABSENT, SETTLED_NS, ReadCache, _Copy
from phasegate.engine.protect_snapshot import item_files, put_back
from phasegate.engine.state import ENGINE_FILE
from phasegate.repo_paths import CONFIG_DIR

#: A file changed or untracked before the call and larger than this is not kept on record.
RECORD_LIMIT = 16 * 1024 * 1024


class OutputsRecord:
    """The files a call may not change, as they were when it began."""

    def __init__(
        self,
        item: WorkItem,
        workdir: Path,
        allowed: Iterable[Path],
        skip: Iterable[Path],
        git: GitFacts | None = None,
    ) -> None:
        self.item = item
        self.item_dir = os.path.abspath(item.item_dir)
        self.git = git if git is not None else GitFacts()
        self.top = self.git.toplevel(workdir)
        self.allowed = frozenset(os.path.abspath(p) for p in allowed)
        self.skip = frozenset(
            os.path.abspath(p)
            for p in (*skip, *item_files(item), item.journal.path, item.archive_path)
        )
        self.cache = ReadCache()
        self._other_items: dict[str, bool] = {}
        listed = self._found(True)
        #: Other work items' folders (they held an engine state when the call began, so a
        #: folder the agent makes to look like one is not): their runs' own.
        self.item_folders = frozenset(
            os.path.dirname(p)
            for p in (*listed, *self._tracked_states())
            if os.path.basename(p) == ENGINE_FILE
        )
        watched = [p for p in listed if self._watched(p)]
        #: Files too large to keep a copy of (a person's build output, say): left alone.
        self.unrecorded = frozenset(p for p in watched if _size(p) > RECORD_LIMIT)
        self.files = {p: self.cache.read(p) for p in watched if p not in self.unrecorded}

    def _tracked_states(self) -> tuple[str, ...]:
        return () if self.top is None else self.git.tracked_states(self.top)

    def _listed(self, whole_tree: bool) -> list[str]:
        """The files to keep on record now: the work tree's changed and untracked ones (when
        ``whole_tree``), and the item folder's."""
        return [p for p in self._found(whole_tree) if self._watched(p)]

    def _found(self, whole_tree: bool) -> list[str]:
        found: set[str] = set()
        if whole_tree and self.top is not None:
            found.update(os.path.join(self.top, name) for name in _changed(self.top))
        for folder, dirs, files in os.walk(self.item_dir):
            for name in (*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))):
                found.add(os.path.join(folder, name))
        return sorted(found)

    def _watched(self, path: str) -> bool:
        path = os.path.abspath(path)
        if path in self.skip:
            return False
        if any(path == a or path.startswith(a.rstrip("/") + "/") for a in self.allowed):
            return False
        if self.top is not None:
            config = os.path.join(self.top, CONFIG_DIR)
            if path == config or path.startswith(config + os.sep):
                return False
        return not self._in_other_item(os.path.dirname(path))

    def _in_other_item(self, folder: str) -> bool:
        """Whether ``folder`` is (in) another work item's folder."""
        if folder == self.item_dir or folder.startswith(self.item_dir + os.sep):
            return False
        known = self._other_items.get(folder)
        if known is not None:
            return known
        parent = os.path.dirname(folder)
        found = folder in self.item_folders or (
            parent != folder
            and (self.top is None or folder.startswith(self.top + os.sep))
            and self._in_other_item(parent)
        )
        self._other_items[folder] = found
        return found

    def undo(self, repo: Path, whole_tree: bool, keep: Path) -> tuple[str, ...]:
        """Put back what differs from the record; the paths, relative to ``repo``. What the
        files held before they were put back is copied under ``keep`` first (nothing is
        lost: a person who edited a file meanwhile finds their edit there)."""
        now = self._listed(whole_tree)
        candidates = set(now) | set(self.files)
        if not whole_tree:
            candidates = {
                p for p in candidates if p.startswith(self.item_dir + os.sep) or p in self.files
            }
        changed: list[tuple[str, _Copy]] = []
        for path in sorted(candidates - self.unrecorded, key=len):
            was = self.files.get(path)
            if was is None:
                was = self._committed(path)
            now_copy = self.cache.read(path)
            if now_copy != was:
                changed.append((path, was))
                if now_copy.kind == "file":
                    kept = keep / _shown(repo, path).lstrip("/")
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    kept.write_bytes(now_copy.content)
        for path, was in changed:
            put_back(Path(path), was)
        return tuple(_shown(repo, p) for p, _ in changed)

    def _committed(self, path: str) -> _Copy:
        """A file that was clean when the call began: as git's index holds it (absent when
        git does not track it)."""
        if self.top is None or not path.startswith(self.top + os.sep):
            return ABSENT
        name = os.path.relpath(path, self.top)
        entry = _git(self.top, ["ls-files", "-s", "-z", "--", f":(literal){name}"])
        if not entry:
            return ABSENT
        meta = entry.split(b"\t", 1)[0].split()
        if len(meta) < 2:
            return ABSENT
        mode, blob = meta[0].decode(), meta[1].decode()
        content = _git(self.top, ["cat-file", "blob", blob])
        if mode == "120000":
            return _Copy("link", content)
        return _Copy("file", content, 0o755 if mode == "100755" else 0o644)


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


class GitFacts:
    """What git said of the work trees calls work in, kept from one call to the next
    (one run's) while what it was found from is unchanged.

    The top of a folder's work tree: a folder that is itself its work tree's top (its own
    ``.git`` is there) stays so while that ``.git`` is the same entry; a ``.git`` made,
    removed or replaced there is asked again, and so is any folder that is not its work
    tree's top. The engine state files git tracks: kept while the index (``.git/index`` of a
    ``.git`` folder) keeps its signature, and only when it had not changed for
    :data:`~phasegate.engine.protect_cache.SETTLED_NS` when git was asked (as files are kept,
    :class:`~phasegate.engine.protect_cache.ReadCache`); git writes a new index file for
    each change."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[int, int], str]] = {}
        self._tracked: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {}

    def tracked_states(self, top: str) -> tuple[str, ...]:
        """The engine state files in the index of the work tree at ``top``."""
        signature = _index_signature(top)
        known = self._tracked.get(top)
        if known is not None and signature is not None and known[0] == signature:
            return known[1]
        out = _git_answer(top, ["ls-files", "-z", "--", f":(glob)**/{ENGINE_FILE}"])
        found = tuple(os.path.join(top, os.fsdecode(n)) for n in (out or b"").split(b"\0") if n)
        if (  # what git failed to say is asked again
            signature is not None
            and out is not None
            and time.time_ns() - max(signature[2:]) >= SETTLED_NS
        ):
            self._tracked[top] = (signature, found)
        else:
            self._tracked.pop(top, None)
        return found

    def toplevel(self, workdir: Path) -> str | None:
        """The top folder of ``workdir``'s git work tree (``None``: not in one)."""
        folder = os.path.abspath(workdir)
        marker = _git_entry(folder)
        known = self._known.get(folder)
        if known is not None and marker is not None and known[0] == marker:
            return known[1]
        found = _toplevel(workdir)
        if marker is not None and found == folder:
            self._known[folder] = (marker, found)
        else:
            self._known.pop(folder, None)
        return found


def _index_signature(top: str) -> tuple[int, ...] | None:
    """The signature of the index of the work tree at ``top`` when git is sure to read it
    there (``None`` otherwise: a worktree's ``.git`` file, an index named elsewhere)."""
    if "GIT_INDEX_FILE" in os.environ or "GIT_DIR" in os.environ:
        return None
    try:
        if not stat.S_ISDIR(os.lstat(os.path.join(top, ".git")).st_mode):
            return None
        info = os.lstat(os.path.join(top, ".git", "index"))
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _git_entry(folder: str) -> tuple[int, int] | None:
    """The inode and kind of ``folder``'s own ``.git`` (``None`` when it has none)."""
    try:
        info = os.lstat(os.path.join(folder, ".git"))
    except OSError:
        return None
    return (info.st_ino, stat.S_IFMT(info.st_mode))


def _toplevel(workdir: Path) -> str | None:
    found = _git(str(workdir), ["rev-parse", "--show-toplevel"]).strip()
    return os.path.abspath(os.fsdecode(found)) if found else None


def _changed(top: str) -> list[str]:
    """The files git reports changed (staged or not, deleted too) or untracked, relative."""
    out = _git(
        top,
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", "."],
    )
    return [os.fsdecode(entry[3:]) for entry in out.split(b"\0") if len(entry) > 3]


def _git(cwd: str, args: list[str]) -> bytes:
    found = _git_answer(cwd, args)
    return found if found is not None else b""


def _git_answer(cwd: str, args: list[str]) -> bytes | None:
    """What git printed (``None`` when it failed)."""
    out = subprocess.run(
        ["git", "-C", cwd, "-c", "core.quotePath=false", *args],
        capture_output=True,
        check=False,
    )
    return out.stdout if out.returncode == 0 else None


def _shown(repo: Path, path: str) -> str:
    try:
        return Path(path).relative_to(repo).as_posix()
    except ValueError:
        return path


def outside_words(paths: Iterable[str], kept: str | None) -> str:
    """What a call changed besides its outputs, in words (``Violation.kept``), and where
    the copies of what it wrote are (``kept``). The paths read from the repository's top
    (``./spec.md``), so a file there is not taken for the item's artifact of that name."""
    where = f"; what it wrote is copied in {kept}" if kept else ""
    shown = ", ".join(p if p.startswith("/") else f"./{p}" for p in paths)
    return f"files other than its outputs ({shown}), which its phase may not change{where}"
