"""A task taken out of PLAN.md (deleted, or renamed: a new title is a new task) between two
runs is not run any more: the decision it waited on is withdrawn, a task not started is
never given to its agent, and the run goes on instead of stopping at every run with "the
plan no longer has the task"."""

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
NEXT = key("Next task")
REVISE = {
    "verdict": {
        "verdict": "NEEDS_REVISION",
        "summary": "not yet",
        "issues": [{"severity": "high", "description": "add tests", "location": None}],
    }
}
APPROVE = {"verdict": {"verdict": "APPROVED", "summary": "ok", "issues": []}}


def stuck_repo(tmp_path: Path) -> Path:
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "calls_log": "calls.jsonl"}},
        "workflows": {"implement": {"settings": {"max_cycles": 1}}},
    }
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {f"implement:{STUCK}": [REVISE], "*": [APPROVE]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    return root


def edit_plan(root: Path, old: str, new: str) -> None:
    plan = root / PLAN
    text = plan.read_text()
    assert old in text
    plan.write_text(text.replace(old, new))


def implementer_calls(root: Path, task: str) -> int:
    lines = (root / "calls.jsonl").read_text().splitlines()
    calls = [json.loads(line) for line in lines if line.strip()]
    return sum(1 for c in calls if c.get("role") == "the-developer" and task in json.dumps(c))


def test_an_escalated_task_renamed_in_the_plan_no_longer_blocks_the_run(tmp_path: Path) -> None:
    root = stuck_repo(tmp_path)
    first = cli(root, "implement", "006", "-q", "--jobs", "1")
    assert first.returncode == 3, first.stderr
    assert f"escalate-{STUCK}" in first.stderr
    edit_plan(root, "**Stuck task**", "**Stuck task, reworded**")

    again = cli(root, "implement", "006", "-q", "--jobs", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no longer has the task" not in again.stderr
    assert "- [x] **Stuck task, reworded**" in (root / PLAN).read_text()
    withdrawn = [e for e in journal(root) if e["event"] == "decision.withdrawn"]
    assert [e["id"] for e in withdrawn] == [f"escalate-{STUCK}"]
    assert "no longer in" in withdrawn[0]["reason"]
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["pendingDecisions"] == []
    assert "Stuck task" not in [t["title"] for t in status["tasks"]]
    # An answer to the withdrawn decision is refused, not recorded.
    late = cli(root, "answer", "006", f"escalate-{STUCK}", "skip_with_warning")
    assert late.returncode != 0


def test_a_task_deleted_from_the_plan_before_its_turn_is_not_run(tmp_path: Path) -> None:
    root = stuck_repo(tmp_path)
    assert cli(root, "implement", "006", "-q", "--jobs", "1").returncode == 3
    edit_plan(root, "- [ ] **Next task** [`agent: the-developer`]\n", "")
    edit_plan(root, "- [ ] **Stuck task**", "- [x] **Stuck task**")

    again = cli(root, "implement", "006", "-q", "--jobs", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert implementer_calls(root, STUCK) == 1
    assert implementer_calls(root, NEXT) == 0
    assert not (root / "src" / f"{NEXT}.py").exists()
    skipped = [
        e
        for e in journal(root)
        if e["event"] == "foreach.item" and e.get("key") == NEXT and e["status"] == "skipped"
    ]
    assert skipped and "no longer in" in skipped[0]["reason"]
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert [t["title"] for t in status["tasks"]] == ["Stuck task"]


PARALLEL_PLAN = """# Plan

## Phase 1: X
**Execution: Parallel**

- [ ] **Parallel one** [`agent: the-developer`]
- [ ] **Parallel two** [`agent: the-developer`]
"""


def test_a_parallel_task_taken_out_before_its_tick_does_not_stop_the_next_run(
    tmp_path: Path,
) -> None:
    """Both parallel tasks approved, the run killed before their ticks; the person takes
    one out of PLAN.md: the next run ticks the other and completes."""
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
    }
    root = make_repo(tmp_path / "repo", PARALLEL_PLAN, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {"*": [APPROVE]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    killed = cli(root, "implement", "006", env={"PHASEGATE_CRASH_AT": "implement.tick_landed"})
    assert killed.returncode == -9, killed.stderr
    assert "- [ ] **Parallel one**" in (root / PLAN).read_text()
    edit_plan(root, "- [ ] **Parallel one** [`agent: the-developer`]\n", "")

    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "- [x] **Parallel two**" in (root / PLAN).read_text()

    # A done task renamed in the completed plan: status lists the plan's tasks, not the
    # old title beside the new one.
    edit_plan(root, "- [x] **Parallel two**", "- [ ] **Parallel two, again**")
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert [t["title"] for t in status["tasks"]] == ["Parallel two, again"]
