"""Where phasegate's files live in a repository, using only the standard library.

Kept free of heavy imports because the Claude Code hooks (which start a fresh
Python process for every session and tool call) use it as well as the CLI.
"""

from __future__ import annotations

from pathlib import Path

CONFIG_DIR = ".phasegate"
CONFIG_FILE = "config.yaml"
#: Item worktrees live in ``.phasegate/worktrees/<item>`` (see ``phasegate new --worktree``).
WORKTREES_DIR = "worktrees"
LOCKS_DIR = "locks"
#: Files phasegate can rebuild at any time (the hooks' workflow layout).
CACHE_DIR = "cache"


def worktree_rel(name: str) -> str:
    """The path, relative to the repository, of work item ``name``'s worktree."""
    return f"{CONFIG_DIR}/{WORKTREES_DIR}/{name}"


def main_checkout(path: Path) -> Path:
    """The main checkout when ``path`` lies inside one of phasegate's item worktrees.

    An item worktree holds its own copy of the repository (``.phasegate/``
    included), so looking for the repository from inside it would find the
    copy; work items and their state live in the main checkout. Purely a path
    test: no git call, so it is cheap enough for the hooks.
    """
    found = path
    for directory in (path, *path.parents):
        parent = directory.parent
        if parent.name == WORKTREES_DIR and parent.parent.name == CONFIG_DIR:
            found = parent.parent.parent  # keep going: the outermost checkout wins
    return found


def find_repo_quick(start: Path) -> Path | None:
    """The repository phasegate works in, found without running git.

    Mirrors :func:`phasegate.config.find_repo`: the nearest directory holding
    ``.phasegate/config.yaml``, else the nearest one holding ``.git`` (a
    directory, or the file of a linked worktree or submodule).
    """
    start = main_checkout(start)
    git_top: Path | None = None
    for directory in (start, *start.parents):
        if (directory / CONFIG_DIR / CONFIG_FILE).is_file():
            return directory
        if git_top is None and (directory / ".git").exists():
            git_top = directory
    return git_top
