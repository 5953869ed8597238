"""Validated workflows kept on disk, so a command does not read and check every YAML file.

Loading a workflow means parsing its YAML defensively, validating it, checking
its graph (which imports the plug-ins it names) and its prompt templates:
about a third of a second for the four built-in workflows, paid by every
command that looks up a work item. Once a workflow has passed all of that,
the plain data it was validated from is written to
``.phasegate/cache/workflows.json`` with a key made of everything its validity
depends on:

- the YAML file's bytes, its path (relative to the repository for the
  repository's own) and where it comes from (built-in or repo);
- every file of its prompt search path (name, size, modification time);
- the installed plug-ins (entry points), and phasegate's version and source
  files (name, size, modification time);

A later load whose key matches builds the workflow from that data (the models
still validate it) and skips the rest. Anything else (no entry, another key, a
cache file that cannot be read or parsed) loads the workflow in full and
rewrites the entry. A plug-in registered at run time (``plugins.register``)
turns the cache off for that process. The cache is only kept in a repository
that has a ``.phasegate`` folder, never committed, and safe to delete.
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
from phasegate.repo_paths import CACHE_DIR, CONFIG_DIR
from phasegate.workflow.sources import tree_stamp

CACHE_FILE = "workflows.json"
#: Bumped when the entries change shape (older files are then rebuilt).
CACHE_FORMAT = 1
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def cache_path(repo: Path) -> Path:
    """Where ``repo``'s validated workflows are kept."""
    return repo / CONFIG_DIR / CACHE_DIR / CACHE_FILE


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


def _named(path: Path, repo: Path) -> str:
    """``path`` relative to the repository when inside it: a repository moved or copied
    elsewhere keeps its entries."""
    try:
        return f"repo:{path.relative_to(repo)}"
    except ValueError:
        return str(path)


def entry_key(repo: Path, path: Path, source: str, search_path: tuple[Path, ...]) -> str | None:
    """The key of workflow file ``path`` of ``repo`` as it is now; ``None`` when it must not
    be cached (a plug-in registered at run time) or cannot be read."""
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


def _entries(repo: Path) -> dict[str, Any]:
    try:
        data = json.loads(cache_path(repo).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
        return {}
    entries = data.get("workflows")
    return entries if isinstance(entries, dict) else {}


def _as_json(value: Any) -> Any:
    """``value`` with its tuples as lists (which JSON gives back, and which the models
    accept for tuples alike)."""
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(item) for item in value]
    return value


def cached_data(repo: Path, name: str, key: str) -> dict[str, Any] | None:
    """The data workflow ``name`` was validated from, if it was cached under ``key``."""
    entry = _entries(repo).get(name)
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    data = entry.get("data")
    return data if isinstance(data, dict) else None


def remember(repo: Path, name: str, key: str, data: dict[str, Any]) -> None:
    """Keep ``data`` for workflow ``name`` under ``key``; never fails the command (a
    read-only checkout, a full disk, data JSON cannot hold: it goes without)."""
    if not (repo / CONFIG_DIR).is_dir():
        return  # no phasegate here yet: leave the repository as it is
    try:
        text = json.dumps(data, ensure_ascii=False)
        if json.loads(text) != _as_json(data):
            return  # a value JSON does not give back as it was: not cached
    except (TypeError, ValueError):
        return  # a YAML value JSON cannot hold (a date): not cached
    path = cache_path(repo)
    entries = _entries(repo)
    entries[name] = {"key": key, "data": json.loads(text)}
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")  # a cache is never committed
        tmp.write_text(
            json.dumps({"format": CACHE_FORMAT, "workflows": entries}, ensure_ascii=False),
            encoding="utf-8",
        )
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
