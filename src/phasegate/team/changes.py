"""``session_changed_files``: every file the session changed, from git, never from an agent.

The list compares the work tree with the commit the session started from
(``base_commit``), so it holds every change of every agent (Coder,
Integrator, Docs...), committed or not, plus new untracked files. phasegate's
own folder and the sessions' folder are left out: those are the session's
artifacts (``context_files``), not its changes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from phasegate.engine.prompting import EMPTY_TREE

_KINDS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "added",
    "T": "modified",
}


def _git(workdir: Path, args: list[str]) -> str:
    out = subprocess.run(
        ["git", "-C", str(workdir), *args],
        capture_output=True,
        text=True,
        check=False,
        errors="replace",
    )
    return out.stdout if out.returncode == 0 else ""


def session_changed_files(
    workdir: Path, base: str | None, excluded: list[str]
) -> list[dict[str, Any]]:
    """``[{path, change_type[, old_path]}]`` of every file changed since ``base``, sorted."""
    excludes = [f":(exclude){e}" for e in [".phasegate", *excluded] if e]
    found: dict[str, dict[str, Any]] = {}
    diff = _git(
        workdir,
        ["diff", "--name-status", "-M", "--no-color", base or EMPTY_TREE, "--", ".", *excludes],
    )
    for line in diff.splitlines():
        parts = line.split("\t")
        if len(parts) < 2 or not parts[0]:
            continue
        kind = _KINDS.get(parts[0][0], "modified")
        if kind == "renamed" and len(parts) >= 3:
            found[parts[2]] = {"path": parts[2], "change_type": "renamed", "old_path": parts[1]}
        else:
            found[parts[-1]] = {"path": parts[-1], "change_type": kind}
    untracked = _git(workdir, ["ls-files", "--others", "--exclude-standard", "--", ".", *excludes])
    for name in untracked.splitlines():
        if name.strip():
            found.setdefault(name, {"path": name, "change_type": "added"})
    return [found[k] for k in sorted(found)]


def session_diff(
    workdir: Path, base: str | None, excluded: list[str], paths: list[str] | None = None
) -> str:
    """The session's changes as a diff plus new files' contents (only ``paths`` when given)."""
    from phasegate.engine.prompting import MAX_DIFF_CHARS, clip, read_file

    excludes = [f":(exclude){e}" for e in [".phasegate", *excluded] if e]
    scope = list(paths) if paths else ["."]
    diff = _git(
        workdir,
        ["diff", "--no-color", "--no-ext-diff", base or EMPTY_TREE, "--", *scope, *excludes],
    )
    sections = ["```diff\n" + diff.rstrip() + "\n```"] if diff.strip() else []
    untracked = _git(
        workdir, ["ls-files", "--others", "--exclude-standard", "--", *scope, *excludes]
    )
    for name in [n for n in untracked.splitlines() if n.strip()]:
        content = read_file(workdir / name)
        if content is not None:
            sections.append(f"New file `{name}`:\n\n```\n{content.rstrip()}\n```")
    return clip("\n\n".join(sections), MAX_DIFF_CHARS)
