"""pydantic's search for plug-ins of its own, skipped when none is installed.

When pydantic builds its first model it imports its plug-in loader, which
imports :mod:`importlib.metadata` and reads the metadata of every installed
distribution for entry points of the ``pydantic`` group: about 15 ms of CPU at
the start of every command that builds a model (``status NAME``, ``run``),
after :mod:`phasegate.plugins` has read those entry-point files already.

:func:`skip_search` (called by phasegate's modules before they define their
first model) puts a loader without plug-ins in its place when that reading
shows that no distribution publishes a pydantic plug-in and every ``sys.path``
entry is a folder (or absent). Anything else leaves pydantic to search as it
does; so does a name of the loader other than the ones kept here, which loads
the real loader at once.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import Any

LOADER = "pydantic.plugin._loader"


class _NoPlugins(types.ModuleType):
    """pydantic's plug-in loader when no pydantic plug-in is installed."""

    PYDANTIC_ENTRY_POINT_GROUP = "pydantic"
    _plugins: dict[str, Any] = {}  # noqa: RUF012 - the loader's own cache, empty
    _loading_plugins = False

    @staticmethod
    def get_plugins() -> tuple[()]:
        return ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what the import system asks a module (``__path__``)
            raise AttributeError(name)
        # A name this stand-in does not have: pydantic's own loader, from now on.
        if sys.modules.get(LOADER) is self:
            del sys.modules[LOADER]
        return getattr(import_module(LOADER), name)


def skip_search() -> None:
    """Spare pydantic its search for plug-ins when none can be found (see the module)."""
    if LOADER in sys.modules:
        return
    from phasegate import plugins

    if plugins.pydantic_plugins_possible():
        return
    sys.modules[LOADER] = _NoPlugins(LOADER)
