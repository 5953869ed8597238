"""Every ``phasegate`` command is a new process: ``phasegate --help`` imports only the CLI
itself (typer, rich), not the engine, the workflow loader, the config models, the change
workflow or the agent SDKs, which the commands that use them import."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "phasegate.engine",
    "phasegate.change",
    "phasegate.workflow.loader",
    "phasegate.workflow.example_files",  # init --example copies with it; the help lists names
    "phasegate.workflow.model",
    "phasegate.config",
    "phasegate.verdicts",
    "phasegate.agents",
    "ruamel",
    "mcp",
    "openai",
)

CODE = f"""
import contextlib, io, json, sys
from phasegate.cli import main
with contextlib.redirect_stdout(io.StringIO()) as shown:
    code = main(["--help"])
light = ("phasegate.engine", "phasegate.engine.index")  # the item index: standard library only
heavy = sorted(m for m in sys.modules if m.startswith({HEAVY!r}) and m not in light)
print(json.dumps({{"code": code, "help": shown.getvalue(), "heavy": heavy}}))
"""


def test_help_starts_without_the_engine_or_the_agent_sdks() -> None:
    """``phasegate --help`` lists the commands without importing what only they need."""
    result = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=60
    )
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["code"] == 0
    for command in ("run", "status", "new", "plan", "doctor", "logs", "hook"):
        assert f" {command} " in found["help"] or f" {command}\n" in found["help"]
    assert found["heavy"] == []


def test_every_command_is_mapped_to_the_module_that_adds_it() -> None:
    """``phasegate NAME`` imports only the module the map names for NAME: the map must
    name every command and group, each with the module that defines it."""
    from phasegate.cli.commands import COMMAND_MODULES, command_name, load_all

    app = load_all()
    found = {command_name(c): c.callback.__module__ for c in app.registered_commands}
    for group in app.registered_groups:
        callbacks = [c.callback for c in group.typer_instance.registered_commands]
        found[command_name(group)] = callbacks[0].__module__
    assert found == COMMAND_MODULES


STATUS_CODE = """
import contextlib, io, json, sys
from phasegate.cli import main
with contextlib.redirect_stdout(io.StringIO()) as shown:
    code = main(["status", "--help"])
modules = sorted(m for m in sys.modules if m.startswith("phasegate.cli.") or m == "pydantic")
print(json.dumps({"code": code, "help": shown.getvalue(), "modules": modules}))
"""


def test_a_command_loads_only_its_own_command_module() -> None:
    """``phasegate status`` builds the status command alone: its own module and the app,
    no other command module, and no pydantic (typer's adapters are built only for a value
    that needs one)."""
    result = subprocess.run(
        [sys.executable, "-c", STATUS_CODE], capture_output=True, text=True, check=True, timeout=60
    )
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["code"] == 0 and found["help"].startswith("Usage: phasegate status")
    assert found["modules"] == [
        "phasegate.cli.app",
        "phasegate.cli.commands",
        "phasegate.cli.lazy_params",
        "phasegate.cli.output",
        "phasegate.cli.status_command",
    ]
