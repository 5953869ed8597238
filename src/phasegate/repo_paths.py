"""Where phasegate's files live in a repository, using only the standard library.

Kept free of heavy imports because the Claude Code hooks (which start a fresh
Python process for every session and tool call) use it as well as the CLI.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

CONFIG_DIR = ".phasegate"
CONFIG_FILE = "config.yaml"
#: Item worktrees live in ``.phasegate/worktrees/<item>`` (see ``phasegate new --worktree``).
WORKTREES_DIR = "worktrees"
LOCKS_DIR = "locks"
#: Files phasegate can rebuild at any time (the hooks' workflow layout).
CACHE_DIR = "cache"
#: The engine's state file in each item folder (as :data:`phasegate.engine.state.ENGINE_FILE`).
ENGINE_FILE = ".engine.json"


def user_cache_dir() -> Path:
    """phasegate's folder in the user's cache dir (``$XDG_CACHE_HOME``, else the OS default):
    outside every repository, so nothing an agent writes in a work tree reaches it."""
    configured = os.environ.get("XDG_CACHE_HOME")
    if configured:
        base = Path(configured)
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path.home() / ".cache"
    return base / "phasegate"


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


def find_repo(start: Path) -> Path:
    """The repository phasegate works in: the nearest ``.phasegate`` or git top level."""
    start = main_checkout(start.resolve())  # from inside an item worktree: its main checkout
    for directory in (start, *start.parents):
        if (directory / CONFIG_DIR / CONFIG_FILE).is_file():
            return directory
    top = git_toplevel(start)
    if top is None:
        from phasegate.errors import ConfigError  # not at the top: the hooks import this module

        raise ConfigError(
            f"{start} is not inside a git repository: run 'git init' and 'phasegate init' first"
        )
    return top


def git_toplevel(path: Path) -> Path | None:
    """The git work tree containing ``path``, or ``None``."""
    import subprocess  # not at the top: the hooks import this module

    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def item_state_files(items_root: Path, view_file: str | None = None) -> Iterator[tuple[str, Path]]:
    """``(item name, state file)`` of every work item folder in ``items_root``, by name.

    An item folder holds the engine's state file; with ``view_file`` (a workflow
    whose state a person may write by hand, seed 002's ``STATE.yaml``), a folder
    holding only that file is an item too, and that file is its state file.
    """
    found = {p.parent: p for p in items_root.glob(f"*/{ENGINE_FILE}")}
    if view_file:
        for path in items_root.glob(f"*/{view_file}"):
            found.setdefault(path.parent, path)
    for folder in sorted(found):
        yield folder.name, found[folder]
