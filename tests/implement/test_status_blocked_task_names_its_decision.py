"""`phasegate status` of a task whose agent answered BLOCKED: its row says it waits for a
person and names the decision to answer, as an escalated task's row does (not the mark of
a task that has not begun)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import cli, key, make_repo

PLAN_TEXT = """# Plan

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Verify signatures** [`agent: the-developer`]
"""
SIGN = key("Sign outgoing payloads")


def test_a_blocked_task_row_names_the_decision_that_waits(tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
    }
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config)
    script = {
        "the-developer": {"*": [{"text": "BLOCKED: the queue library is not installed"}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    assert cli(root, "implement", "006", "-q").returncode == 3
    shown = cli(root, "status", "006", env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    row = next(line for line in shown.stdout.splitlines() if "Sign outgoing payloads" in line)
    assert f"agent blocked (decision blocked-{SIGN})" in row, row
    assert row.split()[0] == "?", row
    pending = next(line for line in shown.stdout.splitlines() if "Verify signatures" in line)
    assert pending.split()[0] == "·", pending
