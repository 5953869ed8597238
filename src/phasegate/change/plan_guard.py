"""Keeping the challenged plan as approved after planning: added specs, dropped tasks.

Once a change is implementing, ``archive`` merges its ``specs/`` into the living
specs. The proposal and the spec files that were there are phasegate's own then
(:meth:`~phasegate.change.view.ChangeView.files` puts an edit back); a spec file an
agent *adds* is not known in advance, so it is found after each call and removed.
tasks.md stays the implementer's to tick off (and to add to), but a call that
drops or rewrites a challenged task has its tasks.md put back.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from phasegate.change.tasks import parse_tasks
from phasegate.engine.protect_cache import _Copy
from phasegate.engine.protect_pending import FolderFiles
from phasegate.errors import PhasegateError
from phasegate.state.atomic import atomic_write_bytes


def watch_added_specs(specs_dir: Path, repo: Path) -> Undo:
    """Before an agent call: what removes, once it ended, the files it added under
    ``specs_dir`` and names them in words (nothing: an empty list). What is there is
    ``recorded``: a run killed during the call has what is new there removed by the next
    run."""
    files_before, dirs_before = _entries(specs_dir)
    recorded = {str(specs_dir): FolderFiles.of(specs_dir)}

    def undo() -> list[str]:
        files, dirs = _entries(specs_dir)
        added = sorted(files - files_before)
        for path in added:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        # Folders the call made (deepest first), once emptied of what it added.
        for folder in sorted(dirs - dirs_before, key=len, reverse=True):
            with contextlib.suppress(OSError):
                if os.path.islink(folder):
                    os.unlink(folder)
                elif not os.listdir(folder):
                    os.rmdir(folder)
                else:
                    shutil.rmtree(folder)
        if not added:
            return []
        shown = ", ".join(_shown(repo, path) for path in added)
        return [
            f"the challenged plan's specs (new file(s) {shown}, removed: only the specs "
            "the challenger approved are merged by archive)"
        ]

    return Undo(undo, recorded)


class Undo:
    """A put-back to run once the call ended, and the files it keeps as they were when the
    call began (``recorded``: the guard writes them to disk with its record, so a run
    killed during the call has them put back by the next run, before the call is made
    again; see :mod:`phasegate.engine.protect_pending`)."""

    def __init__(self, undo: Callable[[], list[str]], recorded: Mapping[str, _Copy]) -> None:
        self.undo = undo
        self.recorded = recorded

    def __call__(self) -> list[str]:
        return self.undo()


def watch_tasks(tasks_path: Path, repo: Path) -> Undo:
    """Before an agent call: what puts tasks.md back, once it ended, when the call dropped
    or reworded a task it listed (ticking a task, or adding one, is the implementer's),
    and names that in words (nothing: an empty list). tasks.md as it was is ``recorded``:
    a run killed during the call has it put back whole (the call is made again)."""
    was, tasks = _tasks_of(tasks_path)
    try:
        mode = tasks_path.stat().st_mode & 0o7777
    except OSError:
        mode = 0o644

    def undo() -> list[str]:
        if was is None or tasks is None:
            return []
        now, left = _tasks_of(tasks_path)
        if now == was:
            return []
        remaining = list(left or [])
        dropped = []
        for task in tasks:
            if task in remaining:
                remaining.remove(task)
            else:
                dropped.append(task)
        if not dropped:
            return []
        with contextlib.suppress(FileNotFoundError):
            if tasks_path.is_dir() and not tasks_path.is_symlink():
                shutil.rmtree(tasks_path)
            else:
                tasks_path.unlink()
        atomic_write_bytes(tasks_path, was)
        shown = "; ".join(dropped[:3]) + (
            f" and {len(dropped) - 3} more" if len(dropped) > 3 else ""
        )
        return [
            f"the challenged tasks ({_shown(repo, str(tasks_path))}: dropped or reworded "
            f"{shown}), put back: ticking a task off is the implementer's, not removing it"
        ]

    kept = {str(tasks_path): _Copy("file", was, mode)} if was is not None and tasks else {}
    return Undo(undo, kept)


def _tasks_of(path: Path) -> tuple[bytes | None, list[str] | None]:
    """tasks.md's bytes and its tasks' texts (``None`` when missing, or its tasks unreadable)."""
    try:
        if path.is_symlink():
            return None, None
        data = path.read_bytes()
    except OSError:
        return None, None
    try:
        tasks = parse_tasks(data.decode("utf-8"), path).tasks
    except (PhasegateError, UnicodeDecodeError):
        return data, None
    return data, [_unmarked(t.text) for t in tasks]


def _unmarked(text: str) -> str:
    """A task's text without the marks that tick it off in a heading (``✅``, ``[x]``)."""
    text = text.replace("✅", "").strip()
    if text[:3].lower() in ("[x]", "[ ]"):
        text = text[3:].strip()
    return text


def _entries(specs_dir: Path) -> tuple[set[str], set[str]]:
    """The files (and links) and the folders below ``specs_dir`` (``specs_dir`` itself when
    it is a link or a file: what it leads to is not the change's)."""
    files: set[str] = set()
    dirs: set[str] = set()
    if os.path.islink(specs_dir) or (specs_dir.exists() and not specs_dir.is_dir()):
        return {str(specs_dir)}, dirs
    for top, folders, names in os.walk(specs_dir):
        for name in folders:
            path = os.path.join(top, name)
            (files if os.path.islink(path) else dirs).add(path)
        files.update(os.path.join(top, name) for name in names)
    return files, dirs


def _shown(repo: Path, path: str) -> str:
    try:
        return Path(path).relative_to(repo).as_posix()
    except ValueError:
        return path
