"""Paths a workflow names stay inside the repository, symlinks included.

A workflow file's paths are checked when it loads (relative, no ``..``); what
they point at is checked here when they are used: an item folder, an input, an
artifact or a check's working directory that is a symlink leading out of the
repository is refused, so no file outside it is written, run in, or put into
an agent's prompt.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

from phasegate.errors import BadInputError, WorkflowError


@functools.lru_cache(maxsize=64)
def _real_root(root: Path) -> Path:
    """Where a repository (or worktree) root really is. Roots are resolved once per
    process (``status`` checks a thousand item folders against the same one); a root
    moved meanwhile only makes paths under its new place look outside: refused."""
    return root.resolve()


def inside(path: Path, roots: Sequence[Path]) -> bool:
    """Whether ``path``, its symlinks followed, lies in one of ``roots`` (followed too)."""
    real = path.resolve()
    for root in roots:
        base = _real_root(root) if root.is_absolute() else root.resolve()
        if real == base or base in real.parents:
            return True
    return False


def lexically_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` lies in ``root`` by its spelling alone (``..`` taken away, no
    symlink followed)."""
    real = Path(os.path.normpath(os.path.abspath(path)))
    base = Path(os.path.normpath(os.path.abspath(root)))
    return real == base or base in real.parents


def check_inside(path: Path, repo: Path, what: str) -> Path:
    """``path`` if it stays in ``repo`` once symlinks are followed, else WorkflowError (exit 2)."""
    if not inside(path, [repo]):
        how = ", through a symlink" if lexically_inside(path, repo) else ""
        raise WorkflowError(
            f"{what} {path} leads outside the repository (to {path.resolve()}{how}); refused"
        )
    return path


def blocking_file(path: Path, root: Path) -> Path | None:
    """The first of ``path`` and its parents below ``root`` that exists and is not a folder
    (a file, or a symlink to one or to nothing): a folder cannot be made there."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    current = root
    for part in parts:
        current = current / part
        if current.is_dir():
            continue
        return current if os.path.lexists(current) else None
    return None


def check_folder_possible(path: Path, root: Path, purpose: str) -> None:
    """BadInputError (exit 2) naming the file in the way when folder ``path`` (under
    ``root``) cannot be made because it, or one of its parents, is not a folder.
    ``purpose`` ends the message: "move it away to {purpose}"."""
    found = blocking_file(path, root)
    if found is None:
        return
    within = "" if found == path else f" (the folder {os.path.relpath(path, root)} goes in it)"
    raise BadInputError(
        f"{os.path.relpath(found, root)} exists and is not a folder{within}; "
        f"move it away to {purpose}"
    )
