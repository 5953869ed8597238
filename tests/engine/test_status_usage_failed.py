"""``status``'s usage counts what was spent: failed attempts too (and says how many
failed), as the budget does; for a generic workflow and for ``implement``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine_helpers import git, init_repo

CONFIG = """\
version: 1
commands:
  test: "true"
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
retries: {agent: 1}
"""

FAILING = """\
ROLE:
  "*":
    - cost_usd: 0.5
      usage: {input_tokens: 100, output_tokens: 20}
      fail: {exit: 1, error: boom}
"""

PLAN = """# Plan

## Phase 1: Core

- [ ] **Create module a** [`agent: the-developer`]
"""


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=120,
    )


def _repo(root: Path, role: str) -> Path:
    init_repo(root)
    (root / ".phasegate").mkdir()
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text(FAILING.replace("ROLE", role))
    return root


def _usage(root: Path, name: str) -> dict[str, Any]:
    done = _cli(root, "status", name, "--json")
    assert done.returncode == 0, done.stderr
    usage: dict[str, Any] = json.loads(done.stdout)["usage"]
    return usage


def _check(root: Path, name: str) -> None:
    usage = _usage(root, name)
    assert usage["calls"] == 2
    assert usage["failedCalls"] == 2
    assert usage["costUsd"] == 1.0
    assert usage["inputTokens"] + usage["outputTokens"] == 240
    shown = _cli(root, "status", name).stdout
    assert "Usage: 2 agent calls (2 failed), 240 tokens in and out" in shown, shown
    assert "$1.0000" in shown


def test_a_generic_workflows_failed_attempts_count_in_its_usage(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", "executor")
    assert _cli(root, "new", "demo", "--description", "Try it").returncode == 0
    done = _cli(root, "run", "demo", "-q")
    assert done.returncode == 6, done.stdout + done.stderr
    _check(root, "demo")


def test_implements_failed_attempts_count_in_its_usage(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", "implementer")
    (root / "docs/specs/006-web").mkdir(parents=True)
    (root / "docs/specs/006-web/PLAN.md").write_text(PLAN)
    (root / ".claude/agents").mkdir(parents=True)
    for name in ("the-developer", "the-architect"):
        (root / ".claude/agents" / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {name}\n---\nYou work.\n"
        )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plan")
    done = _cli(root, "implement", "006", "-q")
    # A task whose implementer failed every attempt waits for a person (failed-<task>).
    assert done.returncode == 3, done.stdout + done.stderr
    _check(root, "006")


def test_a_budget_and_the_usage_agree(tmp_path: Path) -> None:
    """With a budget configured, its spend and the usage are the same figures."""
    root = _repo(tmp_path / "repo", "executor")
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "budget: {item: {usd: 100}}\n")
    assert _cli(root, "new", "demo", "--description", "Try it").returncode == 0
    assert _cli(root, "run", "demo", "-q").returncode == 6
    done = _cli(root, "status", "demo", "--json")
    data = json.loads(done.stdout)
    spent = data["budget"]["spent"]
    assert (spent["usd"], spent["attempts"], spent["failed"]) == (1.0, 2, 2)
    assert (data["usage"]["costUsd"], data["usage"]["calls"], data["usage"]["failedCalls"]) == (
        1.0,
        2,
        2,
    )
