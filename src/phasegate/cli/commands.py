"""Which module defines each ``phasegate`` command, so that a command loads only its own.

Every ``phasegate`` command is a new process. Building the command line of
all of them (importing every command module and letting typer read the
signature of every command) costs more than some commands take to run, so
``phasegate status`` imports :mod:`phasegate.cli.app` only and builds the
command line of ``status`` alone. ``phasegate --help``, an unknown command
(its error suggests the known ones) and shell completion get all of them.
"""

from __future__ import annotations

import copy
import importlib
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

#: Each command (or command group) and the module that adds it to the app, in the order
#: ``phasegate --help`` lists them (the order the modules are imported in).
COMMAND_MODULES: dict[str, str] = {
    "init": "phasegate.cli.app",
    "new": "phasegate.cli.app",
    "run": "phasegate.cli.app",
    "status": "phasegate.cli.status_command",
    "workflows": "phasegate.cli.workflow_commands",
    "validate": "phasegate.cli.workflow_commands",
    "decisions": "phasegate.cli.decisions",
    "answer": "phasegate.cli.decisions",
    "doctor": "phasegate.cli.doctor",
    "hook": "phasegate.cli.integrations",
    "install": "phasegate.cli.integrations",
    "uninstall": "phasegate.cli.integrations",
    "worktree": "phasegate.cli.integrations",
    "plan": "phasegate.cli.change",
    "impl": "phasegate.cli.change",
    "archive": "phasegate.cli.change",
    "mcp": "phasegate.cli.change",
    "change": "phasegate.cli.change",
    "implement": "phasegate.cli.implement",
    "logs": "phasegate.cli.logs",
    "serve": "phasegate.cli.serve",
}

#: The environment variable that asks click for shell completions.
COMPLETION_ENV = "_PHASEGATE_COMPLETE"


def load_all() -> typer.Typer:
    """The app with every command added (every command module imported)."""
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        importlib.import_module(module)
    from phasegate.cli.app import app

    return app


def command_name(info: Any) -> str:
    """The name a registered command or command group is called by."""
    import typer.main

    name = getattr(info, "name", None)
    if isinstance(name, str):
        return name
    instance = getattr(info, "typer_instance", None)
    if instance is not None:  # a group named by its Typer(name=...)
        found = instance.info.name
        return found if isinstance(found, str) else ""
    callback = getattr(info, "callback", None)
    return typer.main.get_command_name(callback.__name__) if callback is not None else ""


def app_for(args: list[str]) -> typer.Typer:
    """The app to run ``phasegate *args`` with: only the command named first when it is one
    of :data:`COMMAND_MODULES`, every command otherwise."""
    first = args[0] if args else ""
    module = COMMAND_MODULES.get(first)
    if module is None or os.environ.get(COMPLETION_ENV):
        return load_all()
    importlib.import_module(module)
    from phasegate.cli.app import app

    only = copy.copy(app)
    only.registered_commands = [c for c in app.registered_commands if command_name(c) == first]
    only.registered_groups = [g for g in app.registered_groups if command_name(g) == first]
    if not only.registered_commands and not only.registered_groups:
        return load_all()  # not where the map says: take no chance
    return only
