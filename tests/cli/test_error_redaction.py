"""A secret in an agent's error never reaches the terminal: the progress line and the final
`phasegate: error:` line both show it redacted, whatever the workflow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "implement"))
from implement_helpers import key, make_repo

from phasegate.errors import ExitCode

SECRET = "sk-ant-api03-SECRETSECRETSECRET1234567890"
FAILING = {"fail": {"exit": 3, "error": f"auth failed for key {SECRET}"}}
SCRIPTED = {
    "roles": {"default": {"backend": "scripted"}},
    "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
}
PLAN = """# Plan: Limits

## Phase 1: Limits

- [ ] **Count requests** [`agent: the-developer`]
"""
task_key = key("Count requests")


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "PHASEGATE_AGENT_CLIS": "none"},
    )


def assert_redacted(ran: subprocess.CompletedProcess[str]) -> None:
    assert ran.returncode == ExitCode.AGENT, ran.stderr
    assert SECRET not in ran.stdout + ran.stderr
    last = ran.stderr.strip().splitlines()[-1]
    assert last.startswith("phasegate: error: "), ran.stderr
    assert "failed" in last and "auth failed for key [REDACTED]" in last, last


def test_the_implement_workflow_redacts_an_agents_error(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", PLAN, config=SCRIPTED, spec="docs/specs/030-limits")
    script = {"the-developer": {"*": [FAILING]}, "*": {"*": [{"text": "APPROVED"}]}}
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    # The task whose agent failed every attempt waits for a person, the error in the question.
    ran = phasegate(root, "implement", "030")
    assert ran.returncode == ExitCode.WAITING, ran.stderr
    assert SECRET not in ran.stdout + ran.stderr
    assert "failed after 2 attempts: auth failed for key [REDACTED]" in ran.stderr, ran.stderr
    engine = (root / ".phasegate" / "implement" / "030" / ".engine.json").read_text()
    assert SECRET not in engine
    assert (
        phasegate(root, "answer", "030", "failed-" + task_key, "skip_with_warning").returncode == 0
    )
    assert phasegate(root, "implement", "030").returncode == 0
    plan = (root / "docs/specs/030-limits/PLAN.md").read_text()
    assert SECRET not in plan and "auth failed for key [REDACTED]" in plan, plan


def test_a_user_workflow_redacts_an_agents_error(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    assert phasegate(root, "init", "--example", "review-loop").returncode == 0
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps({"planner": {"*": [FAILING]}}))
    made = phasegate(root, "new", "limits", "--workflow", "review-loop", "-d", "Add limits")
    assert made.returncode == 0, made.stderr
    assert_redacted(phasegate(root, "run", "limits"))
