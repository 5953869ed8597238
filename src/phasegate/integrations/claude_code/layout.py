"""The workflow layout the hooks need, cached as JSON next to the config.

The hooks must find the work items of every workflow (built-in and the
repository's own, with ``items_dir`` overrides from the config) without
loading the workflow engine, which costs more than the whole hook may take.
So the layout (per workflow: items folder, state/journal/history file names,
phase graph, modes) is written to ``.phasegate/cache/hook-layout.json``
together with a fingerprint of everything it was derived from: the config
file, every workflow file, the prompt templates (a workflow whose template is
gone no longer loads), and phasegate's version. Each call recomputes the
fingerprint (reading a handful of small files, listing the prompt folders)
and uses the cache only if it matches; otherwise it rebuilds the layout once
with the full loader. The cache can therefore never be stale, only missing,
and it is safe to delete. ``phasegate status`` lists the items from it too.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from phasegate import __version__
from phasegate.repo_paths import CACHE_DIR, CONFIG_DIR, CONFIG_FILE
from phasegate.repo_paths import ENGINE_FILE as ENGINE_FILE
from phasegate.workflow.sources import BUILTIN_DIR, REPO_PROMPTS, REPO_WORKFLOWS, tree_stamp

try:  # hashlib's blake2b, without hashlib loading OpenSSL (6 ms of every hook call)
    from _blake2 import blake2b as _digest
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b as _digest

TYPE_CHECKING = False  # typing is not imported at run time: the hooks import this module
if TYPE_CHECKING:
    from typing import Any

    Layout = dict[str, Any]

#: Bump when the layout's shape changes, so old caches are rebuilt.
LAYOUT_FORMAT = 6
LAYOUT_FILE = "hook-layout.json"


def layout_path(repo: Path) -> Path:
    """Where the cached layout of ``repo`` is kept."""
    return repo / CONFIG_DIR / CACHE_DIR / LAYOUT_FILE


def fingerprint(repo: Path) -> str:
    """A digest of every input of the layout: config, workflow files, version."""
    digest = _digest(f"{LAYOUT_FORMAT}:{__version__}".encode())
    sources = [("config", repo / CONFIG_DIR / CONFIG_FILE)]
    sources += [(f"builtin/{p.name}", p) for p in sorted(BUILTIN_DIR.glob("*.yaml"))]
    sources += [(f"repo/{p.name}", p) for p in sorted((repo / REPO_WORKFLOWS).glob("*.yaml"))]
    for label, path in sources:
        digest.update(label.encode() + b"\0")
        try:
            data = path.read_bytes()
        except OSError:
            data = b"\0absent"
        digest.update(len(data).to_bytes(8, "big") + data)
    prompts = {
        "builtin/prompts": BUILTIN_DIR / "prompts",
        "repo/prompts": repo / REPO_WORKFLOWS / "prompts",
        "overrides": repo / REPO_PROMPTS,
    }
    for label, folder in prompts.items():
        digest.update(json.dumps([label, tree_stamp(folder)]).encode())
    return digest.hexdigest()


def load_layout(repo: Path) -> Layout:
    """The layout of ``repo``: from the cache when it is current, else rebuilt and cached.

    Never raises: a layout that cannot be built comes back empty with the
    reason in ``problems``.
    """
    current = fingerprint(repo)
    path = layout_path(repo)
    with contextlib.suppress(OSError, ValueError):
        cached = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(cached, dict) and cached.get("fingerprint") == current:
            return cached
    try:
        # The slow path (the engine's loader) runs once per change of the inputs.
        from phasegate.integrations.claude_code.layout_build import build_layout

        layout = build_layout(repo)
    except Exception as exc:
        reason = f"{exc.__class__.__name__}: {exc}"
        return {"workflows": {}, "problems": [f"could not read the workflows ({reason})"]}
    layout["fingerprint"] = current
    save_layout(path, layout)
    return layout


def save_layout(path: Path, layout: Layout) -> None:
    """Write the cache atomically; a read-only checkout just goes without it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")  # a cache is never committed
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(layout, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def item_folders(repo: Path, layout: Layout) -> list[tuple[str, str, Path]]:
    """``(workflow, item, folder)`` for every work item (a folder holding an engine state)."""
    return [(wf, name, Path(folder)) for wf, name, folder, _ in item_states(repo, layout)]


def item_states(
    repo: Path, layout: Layout
) -> list[tuple[str, str, str, tuple[int, int, int] | None]]:
    """``(workflow, item, folder, identity)`` for every work item: the folder as a string
    and the identity (inode, size, mtime in ns) of its engine state file, ``None`` for an
    item with only a hand-written state file. One ``stat`` an item."""
    workflows = layout.get("workflows", {})
    found: list[tuple[str, str, str, tuple[int, int, int] | None]] = []
    for wf_name, name, folder in item_dirs(repo, layout):
        is_item, identity = state_identity(folder, workflows[wf_name])
        if is_item:
            found.append((wf_name, name, folder, identity))
    return found


def item_dirs(repo: Path, layout: Layout) -> list[tuple[str, str, str]]:
    """``(workflow, name, folder)`` for every folder in the workflows' items folders, in
    order, with no ``stat`` of its own: a folder is a work item when it holds an engine
    state (:func:`item_states` checks; the hook trusts the index for the ones it lists)."""
    found: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    workflows = layout.get("workflows", {})
    for name in sorted(workflows):
        root = os.path.join(repo, workflows[name]["items_dir"])
        try:
            entries = sorted(os.scandir(root), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.path not in seen and entry.is_dir():
                seen.add(entry.path)
                found.append((name, entry.name, entry.path))
    return found


def state_identity(
    folder: str, workflow: dict[str, Any]
) -> tuple[bool, tuple[int, int, int] | None]:
    """Whether ``folder`` is a work item of ``workflow``, and its engine state file's
    identity (``None``: an item with only a hand-written state file)."""
    try:
        stat = os.stat(folder + "/" + ENGINE_FILE)
    except OSError:
        return _has_state(Path(folder), workflow), None
    return True, (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _has_state(folder: Path, workflow: dict[str, Any]) -> bool:
    """A hand-written state file (STATE.yaml) makes an item before phasegate ran on it."""
    state_file = workflow.get("state_file")
    if not workflow.get("commands") or not state_file:
        return False
    return (folder / str(state_file)).is_file()
