"""A task renamed in PLAN.md while it waited for a person, in a phase whose tasks run one
after another: the next `phasegate implement` runs the phase in the work tree as before,
not in git worktrees (where the files git ignores, a virtualenv, are missing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, cli, journal, key, make_repo

PLAN_TEXT = """# Plan

## Phase 1: X

- [ ] **Stuck task** [`agent: the-developer`]
- [ ] **Next task** [`agent: the-developer`]
"""
STUCK = key("Stuck task")


def test_a_renamed_stuck_task_does_not_send_a_sequential_phase_to_worktrees(
    tmp_path: Path,
) -> None:
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
    }
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {f"implement:{STUCK}": [{"text": "no idea"}], "*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    first = cli(root, "implement", "006")
    assert first.returncode == 3, first.stdout + first.stderr
    assert f"unclear-{STUCK}" in first.stderr
    plan = root / PLAN
    plan.write_text(plan.read_text().replace("**Stuck task**", "**Stuck task, reworded**"))

    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "in git worktrees" not in again.stdout + again.stderr
    assert not [e for e in journal(root) if e["event"] == "fanout.started"]
    text = plan.read_text()
    assert "- [x] **Stuck task, reworded**" in text and "- [x] **Next task**" in text, text
    withdrawn = [e["id"] for e in journal(root) if e["event"] == "decision.withdrawn"]
    assert withdrawn == [f"unclear-{STUCK}"]
