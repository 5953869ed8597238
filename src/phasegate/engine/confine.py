"""Paths a workflow names stay inside the repository, symlinks included.

A workflow file's paths are checked when it loads (relative, no ``..``); what
they point at is checked here when they are used: an item folder, an input, an
artifact or a check's working directory that is a symlink leading out of the
repository is refused, so no file outside it is written, run in, or put into
an agent's prompt.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from phasegate.errors import WorkflowError


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


def check_inside(path: Path, repo: Path, what: str) -> Path:
    """``path`` if it stays in ``repo`` once symlinks are followed, else WorkflowError (exit 2)."""
    if not inside(path, [repo]):
        raise WorkflowError(
            f"{what} {path} leads outside the repository (to {path.resolve()}, through a "
            "symlink); refused"
        )
    return path
