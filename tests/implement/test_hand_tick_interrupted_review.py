"""A task whose review was under way when the run was killed, ticked in PLAN.md by a person
before the next run, is done: the resumed run neither asks its review again nor sends it
back to its agent, and goes on with the next task (seed 004's Recovery Strategy: "Check
PLAN.md for checkbox status")."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from implement_helpers import PLAN, cli, key
from test_implement_cli import scripted_repo

TWO_TASKS = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Verify incoming payloads** [`agent: the-developer`]
"""
SIGN = key("Sign outgoing payloads")
VERIFY = key("Verify incoming payloads")


def calls(root: Path) -> list[dict[str, object]]:
    log = root / ".phasegate" / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_a_task_ticked_by_hand_while_its_review_was_interrupted_is_done(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        # Any review asked of the first task again sends it back to its agent.
        "*": {
            f"implement:{SIGN}": [{"text": "NEEDS_REVISION\nRedo the signature."}],
            "*": [{"text": "APPROVED"}],
        },
    }
    root = scripted_repo(tmp_path, script, plan=TWO_TASKS)
    # Killed as the first task's review is about to be asked (the second agent call).
    killed = cli(root, "implement", "006", env={"PHASEGATE_CRASH_AT": "dispatch.before_call@2"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    before = len(calls(root))
    plan = root / PLAN
    plan.write_text(
        plan.read_text().replace("- [ ] **Sign outgoing", "- [x] **Sign outgoing"),
        encoding="utf-8",
    )

    resumed = cli(root, "implement", "006", "-q")
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    made = calls(root)[before:]
    assert [c["task"] for c in made] == [VERIFY, VERIFY], made
    assert "- [x] **Verify incoming payloads**" in plan.read_text()
    rows = {r["key"]: r for r in json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]}
    assert rows[SIGN]["state"] == "ticked by hand", rows[SIGN]
    assert rows[VERIFY]["state"] == "done", rows[VERIFY]
