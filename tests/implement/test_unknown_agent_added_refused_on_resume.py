"""A task naming an unknown agent, added to PLAN.md while a run waited for a person, is
refused by the next `phasegate implement` before any agent is called (exit 2, one line
naming the task's line and the known agents), not after the tasks before it ran."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli, key
from test_implement_cli import scripted_repo

PLAN_TEXT = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Verify incoming payloads** [`agent: the-developer`]

## Phase 2: Docs

- [ ] **Document the headers** [`agent: the-developer`]
"""
SIGN = key("Sign outgoing payloads")


def calls(root: Path) -> int:
    log = root / ".phasegate" / "calls.jsonl"
    return len([line for line in log.read_text().splitlines() if line.strip()])


def test_a_task_added_with_an_unknown_agent_is_refused_before_any_call(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {f"implement:{SIGN}": [{"text": "hmm, maybe"}], "*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script, plan=PLAN_TEXT)
    waiting = cli(root, "implement", "006", "-q")
    assert waiting.returncode == 3, waiting.stderr
    assert cli(root, "answer", "006", f"unclear-{SIGN}", "approve").returncode == 0
    plan = root / PLAN
    plan.write_text(
        plan.read_text() + "- [ ] **Publish the example** [`agent: the-ghost-writer`]\n",
        encoding="utf-8",
    )
    before = calls(root)

    refused = cli(root, "implement", "006", "-q")
    assert refused.returncode == 2, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert calls(root) == before, "an agent was called before the plan was refused"
    assert f"{PLAN}:11:31: task 'Publish the example' names agent 'the-ghost-writer'" in lines[0]
    assert "known agents: the-architect" in lines[0]
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert [t["state"] for t in status["tasks"][1:3]] == ["pending", "pending"]
