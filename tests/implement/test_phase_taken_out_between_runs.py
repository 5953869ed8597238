"""A person takes a whole phase (heading and tasks) out of PLAN.md while a run waits on one
of its tasks: the next `phasegate implement` goes on with the next phase, as it does for a
task taken out, instead of stopping with "no longer has the phase"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, cli, key, make_repo

PLAN_TEXT = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Verify signatures** [`agent: the-developer`]

## Phase 2: Docs

- [ ] **Document signing** [`agent: the-developer`]
"""
SIGN = key("Sign outgoing payloads")


def test_a_phase_taken_out_while_its_task_waits_lets_the_run_go_on(tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
    }
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {f"implement:{SIGN}": [{"text": "no idea"}], "*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    assert cli(root, "implement", "006").returncode == 3
    plan = root / PLAN
    text = plan.read_text()
    plan.write_text(text[: text.index("## Phase 1")] + text[text.index("## Phase 2") :])

    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no longer has the phase" not in again.stderr
    assert "- [x] **Document signing**" in plan.read_text()
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["status"] == "completed"
    assert status["pendingDecisions"] == []
    assert [(t["title"], t["state"]) for t in status["tasks"]] == [("Document signing", "done")]
