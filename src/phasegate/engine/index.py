"""The repository's index of work items, kept by phasegate's own writes.

Every state commit computes the item's *brief* (its label, progress,
concerns, pending decisions and next command) and stores it in the item's
engine state; when the brief changed, it is also written to
``.phasegate/cache/index.json``. The Claude Code SessionStart hook and
``phasegate status`` read that one file instead of every item's state, so
they stay fast with a thousand items. The index is a cache: it can be deleted
at any time, and an item missing from it is read from its own state file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import filelock

from phasegate.repo_paths import CACHE_DIR, CONFIG_DIR

INDEX_FILE = "index.json"
INDEX_FORMAT = 1
MAX_CONCERNS = 3


def index_path(repo: Path) -> Path:
    return repo / CONFIG_DIR / CACHE_DIR / INDEX_FILE


def read_index(repo: Path) -> dict[str, Any]:
    """The index's items (``workflow/item`` -> entry); empty when absent or unreadable."""
    try:
        data = json.loads(index_path(repo).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        return {}
    items = data.get("items")
    return items if isinstance(items, dict) else {}


def update_index(repo: Path, workflow: str, item: str, entry: dict[str, Any] | None) -> None:
    """Set (or, with ``None``, remove) one item's entry; a read-only checkout goes without."""
    path = index_path(repo)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")  # a cache is never committed
        with filelock.FileLock(str(path) + ".lock", timeout=10):
            items = read_index(repo)
            key = f"{workflow}/{item}"
            if entry is None:
                items.pop(key, None)
            else:
                items[key] = entry
            tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
            tmp.write_text(
                json.dumps({"format": INDEX_FORMAT, "items": items}, ensure_ascii=False),
                encoding="utf-8",
            )
            os.replace(tmp, path)
    except (OSError, filelock.Timeout):
        pass
