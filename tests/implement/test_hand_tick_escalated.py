"""A task a person ticks in PLAN.md while its decision waits (an escalation, a fix by
hand, an abort) counts as done: its decision is withdrawn (journaled as
``decision.withdrawn``) and the run goes on with the next task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, cli, journal, key, make_repo

PLAN_TEXT = """# Plan

## Phase 1: X

- [ ] **Stuck task** [`agent: the-developer`]
- [ ] **Next task** [`agent: the-developer`]
"""
STUCK = key("Stuck task")
REVISE = {
    "verdict": {
        "verdict": "NEEDS_REVISION",
        "summary": "not yet",
        "issues": [{"severity": "high", "description": "add tests", "location": None}],
    }
}


def stuck_repo(tmp_path: Path, plan: str = PLAN_TEXT) -> Path:
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        "workflows": {
            "implement": {
                "settings": {
                    "max_cycles": 1,
                    "escalation": {
                        "default_action": "abort_process",
                        "actions": ["skip_with_warning", "abort_process"],
                    },
                }
            }
        },
    }
    root = make_repo(tmp_path / "repo", plan, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {
            f"implement:{STUCK}": [REVISE],
            "*": [{"verdict": {"verdict": "APPROVED", "summary": "ok", "issues": []}}],
        },
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    return root


def tick_by_hand(root: Path, title: str) -> None:
    plan = root / PLAN
    plan.write_text(plan.read_text().replace(f"- [ ] **{title}**", f"- [x] **{title}**"))


def rows(root: Path) -> dict[str, Any]:
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    return {"pending": status["pendingDecisions"], "tasks": status["tasks"], **status}


@pytest.mark.parametrize("answer", [None, "abort_process", "manual_fix"])
def test_a_task_ticked_by_hand_while_its_decision_waits_is_done(
    tmp_path: Path, answer: str | None
) -> None:
    root = stuck_repo(tmp_path)
    first = cli(root, "implement", "006", "-q")
    assert first.returncode == 3, first.stderr
    waiting = f"escalate-{STUCK}"
    if answer is not None:  # the person answered first: it waits at its next decision
        cli(root, "implement", "006", "-q", "-a", f"{waiting}={answer}")
        waiting = {"abort_process": "aborted", "manual_fix": "manual-fix"}[answer]
        waiting = f"{waiting}-{STUCK}"
    assert [d["id"] for d in rows(root)["pending"]] == [waiting]

    tick_by_hand(root, "Stuck task")
    before = rows(root)
    assert before["pending"] == []
    assert [(t["title"], t["state"]) for t in before["tasks"]] == [
        ("Stuck task", "ticked by hand"),
        ("Next task", "pending"),
    ]

    again = cli(root, "implement", "006", "-q")
    assert again.returncode == 0, again.stderr
    text = (root / PLAN).read_text()
    assert "- [x] **Stuck task**" in text and "- [x] **Next task**" in text
    assert "Skipped" not in text and "Accepted" not in text
    withdrawn = [e for e in journal(root) if e.get("event") == "decision.withdrawn"]
    assert [e["id"] for e in withdrawn] == [waiting]
    assert "ticked" in withdrawn[0]["reason"]
    after = rows(root)
    assert after["status"] == "completed" and after["pending"] == []
    assert [t["state"] for t in after["tasks"]] == ["ticked by hand", "done"]
    assert (root / "src" / f"{key('Next task')}.py").is_file()


PARALLEL = """# Plan

## Phase 1: X

**Execution: Parallel**

- [ ] **Stuck task** [`agent: the-developer`]
- [ ] **Other task** [`agent: the-developer`]

## Phase 2: Y

- [ ] **Next task** [`agent: the-developer`]
"""


def test_a_parallel_task_ticked_by_hand_while_escalated_keeps_its_work(tmp_path: Path) -> None:
    """A task of a parallel phase, escalated in its own worktree and ticked by hand: it is
    done, its work is merged into the work tree like any finished task's, and the run goes
    on to the next phase."""
    root = stuck_repo(tmp_path, PARALLEL)
    first = cli(root, "implement", "006", "-q")
    assert first.returncode == 3, first.stderr
    tick_by_hand(root, "Stuck task")
    again = cli(root, "implement", "006", "-q")
    assert again.returncode == 0, again.stderr
    assert "- [ ] " not in (root / PLAN).read_text()
    for title in ("Stuck task", "Other task", "Next task"):
        assert (root / "src" / f"{key(title)}.py").is_file(), title
    withdrawn = [e["id"] for e in journal(root) if e.get("event") == "decision.withdrawn"]
    assert withdrawn == [f"escalate-{STUCK}"]
    after = rows(root)
    assert after["status"] == "completed"
    assert [t["state"] for t in after["tasks"]] == ["ticked by hand", "done", "done"]
