"""Backend plug-ins: built-in and third-party backends register the same way.

A backend is a :class:`~phasegate.agents.base.Backend` subclass published in
the ``phasegate.backends`` entry-point group (``name = "module:Class"``).
phasegate's own backends are declared in its ``pyproject.toml`` through that
same group.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from phasegate.agents.base import Backend
from phasegate.errors import BackendUnavailable, ConfigError

ENTRY_POINT_GROUP = "phasegate.backends"


@cache
def backend_classes() -> dict[str, type[Backend]]:
    """Every installed backend class by name."""
    found: dict[str, type[Backend]] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = entry.load()
        except Exception as exc:  # a broken plug-in must not break the others
            found.setdefault(entry.name, _broken(entry.name, exc))
            continue
        if isinstance(cls, type) and issubclass(cls, Backend):
            found[entry.name] = cls
    return found


def create_backend(name: str, settings: Mapping[str, Any] | None = None) -> Backend:
    """Instantiate backend ``name`` with its settings from config."""
    classes = backend_classes()
    if name not in classes:
        raise ConfigError(
            f"unknown backend {name!r} (installed: {', '.join(sorted(classes)) or 'none'})"
        )
    return classes[name](settings)


def _broken(name: str, exc: Exception) -> type[Backend]:
    message = f"backend {name!r} failed to load: {exc}"

    class BrokenBackend(Backend):
        def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
            raise BackendUnavailable(message)

        def run(self, request: Any) -> Any:  # pragma: no cover - never constructed
            raise BackendUnavailable(message)

    BrokenBackend.name = name
    return BrokenBackend
