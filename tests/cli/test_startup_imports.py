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
