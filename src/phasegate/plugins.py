"""Plug-in groups: how backends, verdict readers, parsers and the rest are found.

Every plug-in, phasegate's own included, is published in an entry-point group
of its distribution (``[project.entry-points."phasegate.actions"]`` in
``pyproject.toml``) and looked up by name when a workflow names it. There is
one registry per group; a workflow naming a plug-in that is not installed
fails ``phasegate validate`` with the file, line and name.

The groups and what each entry point must load:

========================== =====================================================
group                      object
========================== =====================================================
``phasegate.backends``     a :class:`phasegate.agents.base.Backend` subclass
``phasegate.readers``      a :class:`phasegate.verdicts.VerdictReader` instance
``phasegate.parsers``      an :class:`phasegate.engine.plugin_api.ItemParser`
``phasegate.predicates``   a :class:`phasegate.engine.plugin_api.Predicate`
``phasegate.selectors``    a :class:`phasegate.engine.plugin_api.ReviewerSelector`
``phasegate.actions``      an :class:`phasegate.engine.plugin_api.Action`
``phasegate.views``        a :class:`phasegate.engine.plugin_api.StateView` class
``phasegate.context``      a :class:`phasegate.engine.plugin_api.ContextProvider`
========================== =====================================================

Entry points are read straight from the installed distributions'
``entry_points.txt`` files (a few directory listings), because
:func:`importlib.metadata.entry_points` costs tens of milliseconds at every
start of the command.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import Any

GROUPS: dict[str, str] = {
    "backends": "phasegate.backends",
    "readers": "phasegate.readers",
    "parsers": "phasegate.parsers",
    "predicates": "phasegate.predicates",
    "selectors": "phasegate.selectors",
    "actions": "phasegate.actions",
    "views": "phasegate.views",
    "context": "phasegate.context",
}


@dataclass(frozen=True)
class EntryPoint:
    """One ``name = module:attribute`` line of a plug-in group."""

    group: str
    name: str
    value: str
    distribution: str

    def load(self) -> Any:
        module, _, attribute = self.value.partition(":")
        found: Any = import_module(module.strip())
        for part in attribute.strip().split(".") if attribute.strip() else ():
            found = getattr(found, part)
        return found


class PluginError(Exception):
    """A plug-in is unknown or failed to load (the message names the group and name)."""


#: The distributions whose entry points may have a ``[pydantic]`` group (pydantic's own
#: plug-ins: any that mention pydantic), filled by :func:`_all_entry_points`.
_pydantic_groups: list[str] = []


@cache
def _all_entry_points() -> dict[str, dict[str, EntryPoint]]:
    found: dict[str, dict[str, EntryPoint]] = {}
    seen: set[str] = set()
    for directory in sys.path:
        for dist_dir, distribution in _distributions(directory or "."):
            if distribution in seen:
                continue  # the first one on sys.path wins, as for imports
            seen.add(distribution)
            for entry in _parse(os.path.join(dist_dir, "entry_points.txt"), distribution):
                found.setdefault(entry.group, {}).setdefault(entry.name, entry)
    return found


def _distributions(directory: str) -> Iterator[tuple[str, str]]:
    try:
        with os.scandir(directory) as entries:
            names = [e.name for e in entries if e.name.endswith((".dist-info", ".egg-info"))]
    except OSError:
        return
    for name in sorted(names):
        distribution = name.rsplit("-", 1)[0] if name.endswith(".dist-info") else name[:-9]
        yield os.path.join(directory, name), distribution.lower().replace("-", "_")


def _parse(path: str, distribution: str) -> Iterator[EntryPoint]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return
    if "pydantic" in text:  # its [pydantic] group, maybe (a mere mention counts too)
        _pydantic_groups.append(distribution)
    if "[phasegate." not in text:
        return
    group = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            continue
        if group.startswith("phasegate.") and "=" in line:
            name, _, value = line.partition("=")
            yield EntryPoint(group, name.strip(), value.strip(), distribution)


def entry_points(group: str) -> dict[str, EntryPoint]:
    """The entry points of ``group`` (a key of :data:`GROUPS` or the full group name)."""
    full = GROUPS.get(group, group)
    return dict(_all_entry_points().get(full, {}))


def names(group: str) -> list[str]:
    """The plug-in names installed in ``group``, sorted."""
    return sorted(entry_points(group))


_loaded: dict[tuple[str, str], Any] = {}


def load(group: str, name: str) -> Any:
    """The object plug-in ``name`` of ``group`` publishes (loaded once)."""
    key = (GROUPS.get(group, group), name)
    if key in _loaded:
        return _loaded[key]
    found = entry_points(group).get(name)
    if found is None:
        installed = ", ".join(names(group)) or "none"
        kind = group.removesuffix("s")
        raise PluginError(f"unknown {kind} plug-in {name!r} (installed: {installed})")
    try:
        value = found.load()
    except Exception as exc:  # a broken plug-in must not look like a phasegate bug
        raise PluginError(
            f"{group} plug-in {name!r} of {found.distribution} failed to load: "
            f"{exc.__class__.__name__}: {exc}"
        ) from None
    _loaded[key] = value
    return value


def exists(group: str, name: str) -> bool:
    """Whether ``name`` is installed in ``group`` (without loading it)."""
    return name in entry_points(group)


def register(group: str, name: str, value: Any) -> None:
    """Register an object directly (a user's own tests and scripts), over any entry point."""
    full = GROUPS.get(group, group)
    _all_entry_points().setdefault(full, {})[name] = EntryPoint(full, name, "", "<registered>")
    _loaded[(full, name)] = value


def pydantic_plugins_possible() -> bool:
    """Whether pydantic may find a plug-in of its own (an entry point of its ``pydantic``
    group) on ``sys.path``: ``False`` only when every entry of ``sys.path`` is a folder or
    absent and no distribution in them publishes one."""
    _all_entry_points()
    if _pydantic_groups:
        return True
    return any(os.path.exists(entry) and not os.path.isdir(entry) for entry in sys.path if entry)


def fingerprint() -> str | None:
    """The installed plug-ins as text (what a cache of validated workflows is keyed on), or
    ``None`` once one was registered at run time: then its object, which no text names,
    decides whether a workflow naming it is valid."""
    lines: list[str] = []
    for group, found in sorted(_all_entry_points().items()):
        for name, entry in sorted(found.items()):
            if entry.distribution == "<registered>":
                return None
            lines.append(f"{group}\t{name}\t{entry.value}\t{entry.distribution}")
    return "\n".join(lines)
