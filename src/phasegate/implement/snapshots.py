"""What one task changed: the work tree snapshot as a git tree, before and now.

A snapshot is ``git write-tree`` of a private index holding every file of the
work tree that git would add (ignored files and phasegate's own folders left
out); nothing in the repository's own index, branches or stash changes. The
difference between the snapshot taken when a task started and one taken now
is exactly what the task changed, new files included, even when the agent
does not commit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from phasegate.engine.prompting import clip

#: Never part of a task's changes: phasegate's state and the review-cycle file.
EXCLUDED = (".phasegate", ".the-startup")
DIFF_LIMIT = 60_000


@dataclass(frozen=True)
class TaskChanges:
    """The files a task changed and the lines it added, with the diff to show a reviewer."""

    files: tuple[str, ...]
    added: str
    diff: str


def _git(workdir: Path, args: list[str], env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        ["git", "-C", str(workdir), *args],
        capture_output=True,
        text=True,
        check=False,
        errors="replace",
        env={**os.environ, **(env or {})},
    )
    return out.stdout if out.returncode == 0 else ""


def snapshot(workdir: Path, exclude: tuple[str, ...] = ()) -> str | None:
    """The work tree as a git tree id (``None`` outside a git repository)."""
    git_index = _git(workdir, ["rev-parse", "--git-path", "index"]).strip()
    if not git_index:
        return None
    with tempfile.TemporaryDirectory(prefix="phasegate-snapshot-") as folder:
        index = Path(folder) / "index"
        source = Path(git_index) if Path(git_index).is_absolute() else workdir / git_index
        if source.is_file():
            shutil.copyfile(source, index)  # stat data kept: unchanged files are not re-hashed
        env = {"GIT_INDEX_FILE": str(index)}
        specs = [f":(exclude){name}" for name in (*EXCLUDED, *exclude)]
        _git(workdir, ["add", "-A", "--", ".", *specs], env)
        tree = _git(workdir, ["write-tree"], env).strip()
    return tree or None


def changes_between(workdir: Path, before: str | None, after: str | None) -> TaskChanges:
    """What changed from tree ``before`` to tree ``after``."""
    if not before or not after:
        return TaskChanges((), "", "")
    names = _git(workdir, ["diff", "--name-only", "--no-renames", before, after])
    diff = _git(workdir, ["diff", "--no-color", "--no-ext-diff", before, after])
    added = "\n".join(
        line[1:]
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )
    return TaskChanges(
        tuple(n for n in names.splitlines() if n.strip()), added, clip(diff, DIFF_LIMIT)
    )
