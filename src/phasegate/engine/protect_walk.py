"""Which files of ``.phasegate/`` are phasegate's own: walking the folder, and finding the
work-item folders inside it (whose files are their own runs').

Paths are plain strings here (joined from the ``.phasegate/`` folder's path as given):
this runs around every agent call, and a walk whose folders did not change is not made
again (:class:`Layout`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from phasegate.engine.item import WorkItem
from phasegate.engine.state import ENGINE_FILE
from phasegate.repo_paths import CACHE_DIR, LOCKS_DIR, WORKTREES_DIR

#: Folders of ``.phasegate/`` that runs write themselves (or agents work in).
UNPROTECTED_DIRS = frozenset({LOCKS_DIR, CACHE_DIR, WORKTREES_DIR})

#: A folder as :func:`os.lstat` sees it: inode, modification and change times (adding,
#: removing or renaming an entry changes them); ``None`` when there is no such folder.
FolderSignature = tuple[int, int, int] | None


def absolute_path(path: Path) -> Path:
    return Path(os.path.abspath(path))


def folder_signature(folder: str) -> FolderSignature:
    """``folder``'s :data:`FolderSignature` now."""
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_ctime_ns)


@dataclass(frozen=True)
class Listing:
    """A folder's entries by name, sorted: files (and links to files), folders (and links
    to folders, named again in ``linked``)."""

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    linked: frozenset[str] = frozenset()


Lister = Callable[[str], Listing]


def list_folder(folder: str) -> Listing:
    """``folder``'s entries as :func:`os.walk` sorts them (an unreadable folder: none)."""
    files: list[str] = []
    dirs: list[str] = []
    linked: set[str] = set()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if not is_dir:
                    files.append(entry.name)
                    continue
                dirs.append(entry.name)
                with contextlib.suppress(OSError):
                    if entry.is_symlink():
                        linked.add(entry.name)
    except OSError:
        return Listing()
    return Listing(tuple(sorted(files)), tuple(sorted(dirs)), frozenset(linked))


def item_folders(config_dir: Path, item: WorkItem, listing: Lister | None = None) -> frozenset[str]:
    """Work-item folders inside ``config_dir`` (absolute paths): the folder of ``item``'s
    workflow's items when it lies there, and any folder holding an engine state file
    (folders inside one already found are not looked into: the walk skips them anyway)."""
    found: set[str] = set()
    top_abs = os.path.abspath(config_dir)
    inside = top_abs.rstrip(os.sep) + os.sep
    own = os.path.abspath(item.item_dir)
    items = os.path.dirname(own)
    if items.startswith(inside):
        found.add(items)
    elif own.startswith(inside):
        found.add(own)
    if not config_dir.is_dir():
        return frozenset(found)
    list_dir = listing or list_folder
    top = os.fspath(config_dir)
    for group in list_dir(top).dirs:
        if group in UNPROTECTED_DIRS or group.startswith("."):
            continue
        if os.path.join(top_abs, group) in found:
            continue
        for name in list_dir(os.path.join(top, group)).dirs:
            if name.startswith(".") or os.path.join(top_abs, group, name) in found:
                continue
            folder = os.path.join(top, group, name)
            if ENGINE_FILE in list_dir(folder).files:
                found.add(os.path.join(top_abs, group, name))
    return frozenset(found)


def phasegate_files(
    folder: Path, skipped: frozenset[str] = frozenset(), listing: Lister | None = None
) -> Iterator[str]:
    """Every file or link below ``folder``, without the folders runs write themselves
    (and without ``skipped`` folders, given as absolute paths)."""
    if not folder.is_dir() or folder.is_symlink():
        return
    list_dir = listing or list_folder

    def walk(here: str, here_abs: str, top: bool) -> Iterator[str]:
        found = list_dir(here)
        dirs = [d for d in found.dirs if not (top and d in UNPROTECTED_DIRS)]
        if skipped:
            dirs = [d for d in dirs if os.path.join(here_abs, d) not in skipped]
        for name in found.files:
            yield os.path.join(here, name)
        # A link to a folder is listed with the folders: a file here, not walked.
        for name in dirs:
            if name in found.linked:
                yield os.path.join(here, name)
        for name in dirs:
            if name not in found.linked:
                yield from walk(os.path.join(here, name), os.path.join(here_abs, name), False)

    yield from walk(os.fspath(folder), os.path.abspath(folder), True)


#: Lists a folder: its signature when listed, whether it had not changed for a while
#: then (so the listing holds while the signature does), and its entries.
SignedLister = Callable[[str], tuple[FolderSignature, bool, Listing]]


@dataclass(frozen=True)
class Layout:
    """The work-item folders inside ``.phasegate/`` and its other files, as found from the
    listings of ``folders`` (each with its signature then).

    While every one of those folders keeps its signature, no entry was added, removed or
    renamed in any of them, so the same walk finds the same folders and files. A layout
    is kept only when every listing was settled (not changed within the racy window) and
    ``.phasegate/`` is no link (whose target could change behind the same signature).
    """

    item_dirs: frozenset[str]
    files: tuple[str, ...]
    #: ``files`` as absolute paths (to compare with exempt files).
    absolute: tuple[str, ...]
    folders: tuple[tuple[str, FolderSignature], ...]
    reusable: bool

    def current(self) -> bool:
        """Whether every folder listed to find this layout still has its signature."""
        lstat = os.lstat
        for folder, signature in self.folders:
            try:
                info = lstat(folder)
            except OSError:
                if signature is not None:
                    return False
                continue
            if signature != (info.st_ino, info.st_mtime_ns, info.st_ctime_ns):
                return False
        return True


def find_layout(
    config_dir: Path,
    item: WorkItem,
    listed: SignedLister,
    item_dirs: frozenset[str] | None = None,
) -> Layout:
    """Walk ``config_dir`` (its work-item folders found first unless ``item_dirs`` are
    given), noting every folder listed and its signature."""
    folders: dict[str, FolderSignature] = {}
    reusable = True

    def listing(folder: str) -> Listing:
        nonlocal reusable
        signature, settled, found = listed(folder)
        if folders.setdefault(folder, signature) != signature or not settled:
            reusable = False
        return found

    top = os.fspath(config_dir)
    try:
        info = os.lstat(top)
    except OSError:
        folders[top] = None
    else:
        folders[top] = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        if stat.S_ISLNK(info.st_mode):
            reusable = False
    if item_dirs is None:
        item_dirs = item_folders(config_dir, item, listing)
    files = tuple(phasegate_files(config_dir, item_dirs, listing))
    absolute = tuple(os.path.abspath(path) for path in files)
    return Layout(item_dirs, files, absolute, tuple(folders.items()), reusable)


def git_common_dir(repo: Path) -> str | None:
    """The folder of ``repo``'s git repository that holds its ``config`` and ``hooks/``
    (shared by all its worktrees), as a plain string; ``None`` outside git."""
    dot = os.path.join(repo, ".git")
    try:
        info = os.lstat(dot)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return dot
    try:
        with open(dot, encoding="utf-8") as handle:
            line = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = os.path.join(repo, line[len("gitdir:") :].strip())
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            common = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return os.path.normpath(gitdir)
    return os.path.normpath(os.path.join(gitdir, common))


def git_run_files(common: str, listing: Callable[[str], Listing]) -> list[str]:
    """The files of a git repository that make git run commands: its ``config``
    (``core.hooksPath``, ``core.fsmonitor``, filters, aliases) and each hook (git never
    runs a ``*.sample`` one: a sample renamed into a hook is a new file, and found so)."""
    hooks = os.path.join(common, "hooks")
    live = (n for n in listing(hooks).files if not n.endswith(".sample"))
    return [os.path.join(common, "config"), *(os.path.join(hooks, n) for n in live)]
