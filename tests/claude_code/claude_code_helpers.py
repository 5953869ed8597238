"""Helpers for the Claude Code integration tests: real repos, real runs, real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import GIT_ENV, approving_script, git, init_repo, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.engine.item import WorkItem
from phasegate.engine.items import create_item
from phasegate.engine.runner import Asker, RunOptions, RunOutcome

__all__ = [
    "GIT_ENV",
    "approving_script",
    "cli",
    "git",
    "init_repo",
    "make_repo",
    "new_item",
    "read_state",
    "run_item",
    "venv_phasegate",
]

APPROVE = {"verdict": {"approved": True, "issues": [], "summary": "ok"}}


def venv_phasegate() -> Path:
    """The ``phasegate`` console script of the Python running the tests."""
    return Path(sys.executable).parent / "phasegate"


def cli(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the ``phasegate`` console script like a user would (no terminal)."""
    return subprocess.run(
        [str(venv_phasegate()), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin if stdin is not None else "",
        timeout=timeout,
        env={**os.environ, **GIT_ENV, **(env or {})},
    )


def new_item(
    repo: Repo, name: str, *, worktree: bool = False, mode: str | None = None, **extra: Any
) -> WorkItem:
    """Create a ``feature`` work item through the engine (``phasegate new``)."""
    loaded = repo.registry.get("feature")
    description = str(extra.get("description", f"Work on {name}"))
    return create_item(
        repo.root,
        name,
        loaded,
        repo.config,
        mode=mode,
        description=description,
        worktree=worktree,
    )


def run_item(
    repo: Repo,
    name: str,
    script: dict[str, Any] | None = None,
    asker: Asker | None = None,
    **options: Any,
) -> tuple[ScriptedBackend, RunOutcome]:
    """Run ``name`` with scripted agents (the approving script unless given)."""
    backend = ScriptedBackend(script=script or approving_script())
    outcome = repo.run(
        name, backends={"default": backend}, options=RunOptions(**options), asker=asker
    )
    return backend, outcome


def read_state(repo: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (repo / "docs" / "features" / name / ".meta.json").read_text(encoding="utf-8")
    )
    return data
