"""Backend plug-ins: built-in and third-party backends register the same way.

A backend is a :class:`~phasegate.agents.base.Backend` subclass published in
the ``phasegate.backends`` entry-point group (``name = "module:Class"``).
phasegate's own backends are declared in its ``pyproject.toml`` through that
same group. A run imports only the backends its roles use: the others (and the
SDKs they need) are loaded when something asks for every backend, as
``phasegate doctor`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phasegate import plugins
from phasegate.agents.base import Backend
from phasegate.errors import BackendUnavailable, ConfigError

ENTRY_POINT_GROUP = "phasegate.backends"

_classes: dict[str, type[Backend] | None] = {}


def backend_class(name: str) -> type[Backend] | None:
    """The installed backend class ``name`` (loaded once), a stand-in that raises
    :class:`BackendUnavailable` when its plug-in fails to load, or ``None`` when no
    backend of that name is installed."""
    if name not in _classes:
        _classes[name] = _load(name)
    return _classes[name]


def backend_classes() -> dict[str, type[Backend]]:
    """Every installed backend class by name."""
    found: dict[str, type[Backend]] = {}
    for name in plugins.names(ENTRY_POINT_GROUP):
        cls = backend_class(name)
        if cls is not None:
            found[name] = cls
    return found


def create_backend(name: str, settings: Mapping[str, Any] | None = None) -> Backend:
    """Instantiate backend ``name`` with its settings from config."""
    cls = backend_class(name)
    if cls is None:
        installed = ", ".join(sorted(backend_classes())) or "none"
        raise ConfigError(f"unknown backend {name!r} (installed: {installed})")
    return cls(settings)


def check_backend_settings(name: str, settings: Mapping[str, Any]) -> None:
    """ConfigError when ``settings`` cannot configure backend ``name`` (nothing is run)."""
    cls = backend_class(name)
    if cls is not None:
        cls.check_settings(settings)


def _load(name: str) -> type[Backend] | None:
    entry = plugins.entry_points(ENTRY_POINT_GROUP).get(name)
    if entry is None:
        return None
    try:
        cls = entry.load()
    except Exception as exc:  # a broken plug-in must not break the others
        return _broken(name, exc)
    return cls if isinstance(cls, type) and issubclass(cls, Backend) else None


def _broken(name: str, exc: Exception) -> type[Backend]:
    message = f"backend {name!r} failed to load: {exc}"

    class BrokenBackend(Backend):
        def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
            raise BackendUnavailable(message)

        def run(self, request: Any) -> Any:  # pragma: no cover - never constructed
            raise BackendUnavailable(message)

    BrokenBackend.name = name
    return BrokenBackend
