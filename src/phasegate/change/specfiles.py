"""The change's spec files: the order to write them in, and the living specs they started from.

proposal.md's frontmatter lists the specs with their dependencies; they are
written one call at a time, dependencies first (WF-R3 step 2). When a change
first writes a spec, the living spec of that name is copied aside (or noted
as absent): ``archive`` merges against that base, requirement by requirement.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from phasegate.change.frontmatter import split_frontmatter
from phasegate.change.paths import ChangePaths, safe_spec_name
from phasegate.state.atomic import atomic_write_bytes


def spec_entries(proposal: str) -> tuple[list[tuple[str, list[str]]] | None, list[str]]:
    """``([(spec file, its dependencies)], warnings)`` from proposal.md's frontmatter.

    ``None`` when proposal.md lists no specs. Unsafe names are dropped, with a warning.
    """
    front, _, _ = split_frontmatter(proposal)
    if front is None or "specs" not in front:
        return None, []
    raw = front.get("specs") or []
    warnings: list[str] = []
    if not isinstance(raw, list):
        return None, [f"proposal.md frontmatter 'specs' is not a list ({type(raw).__name__})"]
    entries: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for entry in raw:
        name_raw, deps_raw = _entry(entry)
        name = safe_spec_name(name_raw) if name_raw else None
        if name is None:
            warnings.append(f"ignored spec entry {entry!r}: not a safe spec file name")
            continue
        if name in seen:
            continue
        seen.add(name)
        deps = [d for d in (safe_spec_name(str(x)) for x in deps_raw) if d]
        entries.append((name, deps))
    for name, deps in entries:
        for dep in deps:
            if dep not in seen:
                warnings.append(f"{name} depends on {dep}, which the proposal does not list")
    return entries, warnings


def spec_order(proposal: str) -> tuple[list[str] | None, list[str]]:
    """``(spec files in dependency order, warnings)``; ``None`` when proposal.md lists none.

    Dependencies come before their dependents; otherwise the listed order is
    kept. A cycle is broken at the listed order, with a warning.
    """
    entries, warnings = spec_entries(proposal)
    if entries is None:
        return None, warnings
    depends = dict(entries)
    ordered: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in ordered:
            return
        if name in visiting:
            warnings.append(f"dependency cycle through {name}; keeping the listed order")
            return
        visiting.add(name)
        for dep in depends[name]:
            if dep in depends:
                visit(dep)
        visiting.discard(name)
        if name not in ordered:
            ordered.append(name)

    for name, _ in entries:
        visit(name)
    return ordered, warnings


def _entry(entry: Any) -> tuple[str | None, list[Any]]:
    if isinstance(entry, str):
        return entry, []
    if isinstance(entry, dict):
        name = entry.get("name")
        deps = entry.get("depends_on") or []
        return (str(name) if name else None), (deps if isinstance(deps, list) else [deps])
    return None, []


def snapshot_bases(change: ChangePaths, bases: MutableMapping[str, bool]) -> list[str]:
    """Copy aside the living version of each spec the change newly edits; return their names."""
    added: list[str] = []
    for name in change.spec_files():
        if name in bases:
            continue
        living = change.living_specs_dir / name
        exists = living.is_file()
        if exists:
            target = change.base_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, living.read_bytes())
        bases[name] = exists
        added.append(name)
    return added


def base_text(change: ChangePaths, bases: MutableMapping[str, bool], name: str) -> str | None:
    """The living spec ``name`` as the change found it (``None``: it did not exist).

    A spec without a recorded base (added to the change by hand later) is
    taken to start from the living spec as it is now.
    """
    if name not in bases:
        return _read(change.living_specs_dir / name)
    if not bases[name]:
        return None
    return _read(change.base_dir / name)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
