"""Helpers shared by engine and CLI tests: real git repos and scripted agents."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.state import EngineState, read_state_file

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    return out.stdout


def init_repo(repo: Path) -> Path:
    """Make ``repo`` a git repository with one commit holding a tiny project."""
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "README.md").write_text("# sample\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def phasegate_cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a script runs it in ``repo``: no terminal, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def item_run_until(path: Path, phase: str) -> Path:
    """A repository at ``path`` (``init``, the approving scripted agents) whose feature
    item ``x`` (mode quick) ran until ``phase``, through the CLI."""
    from ruamel.yaml import YAML

    root = init_repo(path)
    assert phasegate_cli(root, "init", "--test-command", "true").returncode == 0
    with open(root / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate_cli(root, "new", "x", "--mode", "quick").returncode == 0
    assert phasegate_cli(root, "run", "x", "--until", phase).returncode == 0
    return root


def make_repo(root: Path, **config: Any) -> Repo:
    return Repo(root, Config.model_validate(config) if config else Config())


#: A script in which every document phase is approved at once.
def approving_script() -> dict[str, Any]:
    return {
        "executor": {
            "brainstorm": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\nproblem\n"}}],
            "specify": [{"write": {"{item_dir}/spec.md": "# Spec\nR1\n"}, "text": "wrote spec"}],
            "design": [{"write": {"{item_dir}/design.md": "# Design\n"}}],
            "create-plan": [{"write": {"{item_dir}/plan.md": "# Plan\n"}}],
            "create-tasks": [{"write": {"{item_dir}/tasks.md": "# Tasks\n- [ ] t1\n"}}],
            "implement": [{"write": {"app.py": "print('hi')\n"}, "text": "wrote app.py"}],
            "verify": [{"write": {"{item_dir}/verification.md": "# Verified\n"}}],
        },
        "*": {"*": [{"verdict": {"approved": True, "issues": [], "summary": "ok"}}]},
    }


def calls(
    backend: ScriptedBackend, role: str | None = None, phase: str | None = None
) -> list[AgentRequest]:
    """The requests ``backend`` received, filtered by role and phase."""
    return [
        r
        for r in backend.requests
        if (role is None or r.role == role) and (phase is None or r.labels["phase"] == phase)
    ]


def engine_view(item_dir: Path) -> dict[str, Any]:
    """The engine's own record of an item, in the shape tests read: review iterations, cursor.

    ``iterations`` lists every review iteration of every node, oldest first; ``cursor``
    is where the walk stands inside a phase that is under way (``None`` otherwise).
    """

    engine = read_state_file(item_dir / ".engine.json").to_dict()
    nodes = engine.get("nodes") or {}
    records: list[dict[str, Any]] = []
    for node in nodes.values():
        records.extend(node.get("iterations") or [])
    records.sort(key=lambda r: (r.get("timestamp", ""), r.get("iteration", 0)))
    at = engine.get("at")
    cursor = None
    current = nodes.get(at) if at else None
    if current and current.get("started") and current.get("outcome") is None:
        cursor = {
            "phase": at,
            "iteration": current.get("iteration", 1),
            "stage": str(current.get("stage", "execute")).split(":", 1)[0],
        }
    return {"iterations": records, "cursor": cursor, "raw": engine}


def read_meta(item_dir: Path) -> dict[str, Any]:
    """``.meta.json`` with the engine's record of the item under ``engine``."""
    import json

    meta: dict[str, Any] = json.loads((item_dir / ".meta.json").read_text(encoding="utf-8"))
    meta["engine"] = engine_view(item_dir)
    return meta


def loop_workflow(phases: int) -> str:
    """A workflow ``loop`` of ``phases`` phases (``p1.md``...), each an executor writing its
    artifact from ``executor.md`` and a reviewer, at most 3 iterations."""
    return (
        "name: loop\nitems_dir: work\ndefault_mode: standard\n"
        "modes:\n  standard: {max_iterations: 3}\n"
        "roles:\n  executor: {access: write}\n  reviewer: {access: read-only}\nphases:\n"
    ) + "".join(
        f"  - name: p{n}\n    artifact: p{n}.md\n    executor: executor\n"
        "    executor_prompt: executor.md\n    reviewer: reviewer\n"
        for n in range(1, phases + 1)
    )


def fresh_state() -> EngineState:
    """A new engine state of an item ``demo`` of the feature workflow, nothing run yet."""
    return EngineState.new(
        item="demo",
        workflow="feature",
        mode="standard",
        description="a request",
        created="2026-01-01T00:00:00Z",
        base_commit=None,
    )
