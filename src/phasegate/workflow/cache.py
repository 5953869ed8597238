"""Validated workflows kept on disk, so a command does not read and check every YAML file.

Loading a workflow means parsing its YAML defensively, validating it, checking
its graph (which imports the plug-ins it names) and its prompt templates:
about a third of a second for the four built-in workflows, paid by every
command that looks up a work item. Once a workflow has passed all of that,
the plain data it was validated from is kept under a key made of everything
its validity depends on:

- the YAML file's bytes, its path (relative to the repository for the
  repository's own) and where it comes from (built-in or repo);
- every file of its prompt search path (name, size, modification time);
- the installed plug-ins (entry points), and phasegate's version and source
  files (name, size, modification time).

A later load whose key is found builds the workflow from that data (the models
still validate it) and skips the rest. Anything else (no entry, an entry that
cannot be read or does not validate) loads the workflow in full and writes the
entry anew. A plug-in registered at run time (``plugins.register``) turns the
cache off for that process.

The entries are files named by their key in ``workflows/`` of phasegate's
folder in the user's cache dir (as the agent CLIs' probes are): outside every
repository, so an agent, which may write only in its work tree, cannot put a
workflow there that never passed the checks. Repositories with the same
workflow files share entries; the oldest are removed beyond
:data:`MAX_ENTRIES`. Deleting the folder is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from phasegate import __version__, plugins
from phasegate.repo_paths import user_cache_dir
from phasegate.workflow.sources import tree_stamp

#: Bumped when the entries change shape (older ones are then ignored).
CACHE_FORMAT = 1
#: Entries kept; the ones written longest ago go first.
MAX_ENTRIES = 64
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def cache_folder() -> Path:
    """Where the validated workflows are kept."""
    return user_cache_dir() / "workflows"


def entry_path(key: str) -> Path:
    """The file of the entry with ``key``."""
    return cache_folder() / f"{key}.json"


@cache
def _code_stamp() -> str:
    """phasegate's version and the name, size and time of each of its source files: a
    changed rule (an edited check, a plug-in's vocabulary) makes every entry stale."""
    digest = hashlib.sha256(__version__.encode())
    pending = [str(PACKAGE_DIR)]
    found: list[tuple[str, int, int]] = []
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            pending.append(entry.path)
                    elif entry.name.endswith(".py"):
                        info = entry.stat()
                        found.append((entry.path, info.st_size, info.st_mtime_ns))
        except OSError:
            continue
    digest.update(json.dumps(sorted(found)).encode())
    return digest.hexdigest()


def _named(path: Path, repo: Path | None) -> str:
    """``path`` relative to the repository when inside it: repositories holding the same
    files share entries, and a repository moved elsewhere keeps its own."""
    if repo is not None:
        with contextlib.suppress(ValueError):
            return f"repo:{path.relative_to(repo)}"
    return str(path)


def entry_key(
    repo: Path | None, path: Path, source: str, search_path: tuple[Path, ...]
) -> str | None:
    """The key of workflow file ``path`` (of ``repo``) as it is now; ``None`` when it must
    not be cached (a plug-in registered at run time) or cannot be read."""
    installed = plugins.fingerprint()
    if installed is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    named = _named(path, repo)
    digest = hashlib.sha256(f"{CACHE_FORMAT}\0{_code_stamp()}\0{source}\0{named}\0".encode())
    digest.update(len(data).to_bytes(8, "big") + data)
    for folder in search_path:
        digest.update(json.dumps([_named(folder, repo), tree_stamp(folder)]).encode())
    digest.update(installed.encode())
    return digest.hexdigest()


def cached_data(name: str, key: str) -> dict[str, Any] | None:
    """The data workflow ``name`` was validated from, if it was kept under ``key``."""
    try:
        entry = json.loads(entry_path(key).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
        return None
    data = entry.get("data")
    if entry.get("name") != name or not isinstance(data, dict):
        return None
    return data


def _as_json(value: Any) -> Any:
    """``value`` with its tuples as lists (which JSON gives back, and which the models
    accept for tuples alike)."""
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(item) for item in value]
    return value


def remember(name: str, key: str, data: dict[str, Any]) -> None:
    """Keep ``data`` for workflow ``name`` under ``key``; never fails the command (a
    cache folder that cannot be written, data JSON cannot hold: it goes without)."""
    try:
        text = json.dumps({"format": CACHE_FORMAT, "name": name, "data": data}, ensure_ascii=False)
        if json.loads(text)["data"] != _as_json(data):
            return  # a value JSON does not give back as it was: not cached
    except (TypeError, ValueError):
        return  # a YAML value JSON cannot hold (a date): not cached
    path = entry_path(key)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Remove the entries written longest ago beyond :data:`MAX_ENTRIES`."""
    try:
        with os.scandir(folder) as listed:
            entries = [e for e in listed if e.name.endswith(".json") and e.is_file()]
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
    except OSError:
        return
    for entry in entries[: len(entries) - MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
