"""``phasegate install claude-code`` / ``uninstall claude-code``.

Adds to a repository: the SessionStart hook (and, unless turned off, the
PreToolUse state guard) in ``.claude/settings.json``; slash commands in
``.claude/commands/phasegate-*.md``; and the MCP server in ``.mcp.json`` when
this phasegate has the ``mcp`` command. Entries are merged into what is there
(:mod:`.settings`); command files carry a marker so that uninstall removes
only phasegate's, and install refuses to overwrite a user's file.

A session started inside an item worktree reads only that checkout's
``.claude/``, which lacks uncommitted settings of the main checkout; so each
item worktree gets the same hooks in its ``.claude/settings.local.json``
(unless its checkout already carries them), and that file is kept out of git
status through the repository's ``info/exclude``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from phasegate.engine.confine import check_folder_possible
from phasegate.errors import BadInputError, ConfigError
from phasegate.integrations.claude_code.commands import MARKER, PREFIX, command_files
from phasegate.integrations.claude_code.settings import (
    LOCAL_SETTINGS,
    MCP_FILE,
    SETTINGS,
    Report,
    installed_hooks,
    merge_hooks,
    merge_mcp,
    read_json,
    write_file,
)
from phasegate.repo_paths import CONFIG_DIR, WORKTREES_DIR

COMMANDS_DIR = Path(".claude") / "commands"
EXCLUDE_BLOCK = (
    "# phasegate: Claude Code settings of item worktrees "
    "(phasegate uninstall claude-code removes these two lines)\n"
    f"/{LOCAL_SETTINGS.as_posix()}\n"
)


def default_command() -> str:
    """How the hooks and commands call phasegate.

    Plain ``phasegate`` when that is on PATH (settings a team can share);
    otherwise the absolute path of the console script next to this Python,
    or ``python -m phasegate`` with this interpreter.
    """
    if shutil.which("phasegate"):
        return "phasegate"
    script = Path(sys.executable).parent / "phasegate"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m phasegate"


def _ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def _commands(repo: Path, files: dict[str, str], report: Report) -> None:
    folder = repo / COMMANDS_DIR
    for name, content in files.items():
        path = folder / name
        before = path.read_text(encoding="utf-8") if path.exists() else None
        write_file(path, content, before, report)
    for path in sorted(folder.glob(f"{PREFIX}*.md")) if folder.is_dir() else []:
        if path.name not in files and _ours(path):
            write_file(path, None, path.read_text(encoding="utf-8"), report)
    _remove_empty(folder, folder.parent)


def _check_conflicts(repo: Path, files: dict[str, str]) -> None:
    """Refuse before writing anything if a user's own file has one of our names."""
    for name in files:
        path = repo / COMMANDS_DIR / name
        if path.exists() and not _ours(path):
            raise BadInputError(
                f"{path} exists and is not phasegate's; rename it (or remove it) and "
                "install again. Nothing was changed."
            )


def install(
    repo: Path,
    cmd: str,
    phases: Sequence[tuple[str, str]],
    *,
    guard: bool = True,
    mcp: bool = False,
) -> Report:
    """Add (or bring up to date) phasegate's hooks, slash commands and MCP server in ``repo``."""
    files = command_files(cmd, phases)
    # A file where .claude or its commands folder goes: named before anything is written.
    check_folder_possible(repo / COMMANDS_DIR, repo, "install phasegate into Claude Code")
    _check_conflicts(repo, files)
    for path in (repo / SETTINGS, repo / MCP_FILE):
        read_json(path)  # a broken file stops the install before anything is written
    report = Report()
    merge_hooks(repo / SETTINGS, cmd, guard, report)
    _commands(repo, files, report)
    if mcp or (repo / MCP_FILE).exists():
        merge_mcp(repo / MCP_FILE, cmd if mcp else None, report)
    sync_worktrees(repo, report)
    return report


def uninstall(repo: Path) -> Report:
    """Remove exactly what :func:`install` added; the user's entries are left byte for byte."""
    for path in (repo / SETTINGS, repo / MCP_FILE):
        read_json(path)
    report = Report()
    merge_hooks(repo / SETTINGS, None, False, report)
    _commands(repo, {}, report)
    if (repo / MCP_FILE).exists():
        merge_mcp(repo / MCP_FILE, None, report)
    sync_worktrees(repo, report)
    return report


def _remove_empty(*directories: Path) -> None:
    for directory in directories:
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()


def item_worktrees(repo: Path) -> list[Path]:
    """The item worktrees checked out under ``.phasegate/worktrees``."""
    folder = repo / CONFIG_DIR / WORKTREES_DIR
    if not folder.is_dir():
        return []
    return [p for p in sorted(folder.iterdir()) if p.is_dir() and (p / ".git").exists()]


def sync_worktrees(repo: Path, report: Report | None = None) -> Report:
    """Give every item worktree the hooks the main checkout has (or none, if it has none)."""
    report = report if report is not None else Report()
    wanted = installed_hooks(repo / SETTINGS)
    worktrees = item_worktrees(repo)
    for worktree in worktrees:
        carried = installed_hooks(worktree / SETTINGS) is not None  # committed with the branch
        cmd, guard = wanted if wanted is not None and not carried else (None, False)
        try:
            merge_hooks(worktree / LOCAL_SETTINGS, cmd, guard, report)
        except ConfigError as exc:  # one broken worktree must not stop the others
            report.notes.append(f"skipped: {exc}")
        _remove_empty(worktree / LOCAL_SETTINGS.parent)
    _exclude(repo, wanted is not None and bool(worktrees), report)
    return report


def _exclude(repo: Path, want: bool, report: Report) -> None:
    """Add or remove phasegate's lines in the repository's ``info/exclude``."""
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--git-common-dir"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0 or not out.stdout.strip():
        return
    path = (repo / out.stdout.strip()).resolve() / "info" / "exclude"
    before = path.read_text(encoding="utf-8") if path.exists() else None
    text = before or ""
    if want and EXCLUDE_BLOCK not in text:
        text += ("" if not text or text.endswith("\n") else "\n") + EXCLUDE_BLOCK
    elif not want:
        text = text.replace(EXCLUDE_BLOCK, "")
    if text != (before or ""):
        write_file(path, text, before, report)
