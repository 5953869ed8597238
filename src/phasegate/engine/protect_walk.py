"""Which files of ``.phasegate/`` are phasegate's own: walking the folder, and finding the
work-item folders inside it (whose files are their own runs')."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from phasegate.engine.item import WorkItem
from phasegate.engine.state import ENGINE_FILE
from phasegate.repo_paths import CACHE_DIR, LOCKS_DIR, WORKTREES_DIR

#: Folders of ``.phasegate/`` that runs write themselves (or agents work in).
UNPROTECTED_DIRS = frozenset({LOCKS_DIR, CACHE_DIR, WORKTREES_DIR})


def absolute_path(path: Path) -> Path:
    return Path(os.path.abspath(path))


def item_folders(
    config_dir: Path, item: WorkItem, listing: Lister | None = None
) -> frozenset[Path]:
    """Work-item folders inside ``config_dir``: the folder of ``item``'s workflow's items
    when it lies there, and any folder holding an engine state file."""
    found: set[Path] = set()
    items = absolute_path(item.item_dir).parent
    if absolute_path(config_dir) in items.parents:
        found.add(items)
    elif absolute_path(config_dir) in absolute_path(item.item_dir).parents:
        found.add(absolute_path(item.item_dir))
    if not config_dir.is_dir():
        return frozenset(found)
    list_dir = listing or list_folder
    top = str(config_dir)
    for group in list_dir(top).dirs:
        if group in UNPROTECTED_DIRS or group.startswith("."):
            continue
        for name in list_dir(os.path.join(top, group)).dirs:
            if name.startswith("."):
                continue
            folder = os.path.join(top, group, name)
            if ENGINE_FILE in list_dir(folder).files:
                found.add(absolute_path(Path(folder)))
    return frozenset(found)


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


def phasegate_files(
    folder: Path, skipped: frozenset[Path] = frozenset(), listing: Lister | None = None
) -> Iterator[Path]:
    """Every file or link below ``folder``, without the folders runs write themselves
    (and without ``skipped`` folders)."""
    if not folder.is_dir() or folder.is_symlink():
        return
    list_dir = listing or list_folder
    skipped_names = {str(p) for p in skipped}

    def walk(here: str, here_abs: str, top: bool) -> Iterator[Path]:
        found = list_dir(here)
        dirs = [d for d in found.dirs if not (top and d in UNPROTECTED_DIRS)]
        if skipped_names:
            dirs = [d for d in dirs if os.path.join(here_abs, d) not in skipped_names]
        for name in found.files:
            yield Path(here, name)
        # A link to a folder is listed with the folders: a file here, not walked.
        for name in dirs:
            if name in found.linked:
                yield Path(here, name)
        for name in dirs:
            if name not in found.linked:
                yield from walk(os.path.join(here, name), os.path.join(here_abs, name), False)

    yield from walk(str(folder), os.path.abspath(folder), True)
