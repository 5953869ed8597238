"""PLAN.md is phasegate's alone in a sequential run too: whatever an executor changes in it
(ticks, unticks, ``review: false``, a deleted file) is put back right after its call and
journaled (``implement.plan_restored``), and the run goes on as the plan really stands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, Team, cli, journal, key, make_repo, new_item, run
from test_implement_cli import SIGN, scripted_repo

from phasegate.errors import BlockedError

PLAN_TEXT = """# Plan

## Phase 1: Core
**Execution: Sequential**

- [ ] **Create module a** [`agent: the-developer`]
- [ ] **Create module b** [`agent: the-developer`]
- [ ] **Validation**: run the tests

## Phase 2: More
- [ ] **Create module c** [`agent: the-developer`]
"""
FORGED = """# Plan

## Phase 1: Core
**Execution: Sequential**

- [ ] **Create module a** [`agent: the-developer`]
- [ ] **Create module b** [`agent: the-developer`] [`review: false`]
- [x] **Validation**: run the tests

## Phase 2: More
- [x] **Create module c** [`agent: the-developer`]
"""
A, B, C = (key(f"Create module {n}") for n in "abc")


def config(test: str) -> dict[str, Any]:
    return {
        "commands": {"test": test},
        "retries": {"agent": 1},
        "workflows": {"implement": {"settings": {"max_cycles": 2}}},
    }


def team(edit: dict[str, Any]) -> Team:
    approve = {"text": "APPROVED"}
    return Team(
        {
            "the-developer": {
                "Create module a": [{"write": {"src/a.py": "a = 1\n"}, **edit}],
                "Create module b": [{"write": {"src/b.py": "b = 1\n"}, **edit}],
                "Create module c": [{"write": {"src/c.py": "c = 1\n"}}],
            },
            "*": {"*": [approve]},
        }
    )


def executed(agents: Team) -> list[str]:
    return [r.labels["task"] for r in agents.calls(stage="execute")]


def reviewed(agents: Team) -> list[str]:
    return [r.labels["task"] for r in agents.calls(stage="review")]


def test_an_executors_edit_of_the_plan_is_put_back_after_its_call(tmp_path: Path) -> None:
    """Sequential tasks: an executor that ticks later tasks and the validation checkpoint,
    unticks nothing of its own and marks a task ``review: false`` changes nothing: the plan
    is put back after each call, the failing check stops the phase, task c never counts as
    done, and task b is still reviewed."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config("false"))
    agents = team({"write": {"src/x.py": "x\n", PLAN: FORGED}})
    for task in ("a", "b"):  # one reply writes both files
        agents.script["the-developer"][f"Create module {task}"][0]["write"] = {
            f"src/{task}.py": f"{task} = 1\n",
            PLAN: FORGED,
        }
    with pytest.raises(BlockedError, match="check 'test' \\(false\\) failed"):
        run(new_item(root, config("false")), agents)
    assert executed(agents) == [A, B]
    assert reviewed(agents) == [A, B]
    lines = (root / PLAN).read_text().splitlines()
    assert "- [x] **Create module a** [`agent: the-developer`]" in lines
    assert "- [x] **Create module b** [`agent: the-developer`]" in lines
    assert "- [ ] **Validation**: run the tests" in lines
    assert "- [ ] **Create module c** [`agent: the-developer`]" in lines
    restored = [e for e in journal(root) if e["event"] == "implement.plan_restored"]
    assert [e["task"] for e in restored] == [A, B]
    assert all(e["plan"] == PLAN and e["removed"] is False for e in restored)
    assert (root / "src" / "a.py").read_text() == "a = 1\n"  # the task's own work stands


def test_an_executor_that_unticks_a_done_task_changes_nothing(tmp_path: Path) -> None:
    """Task b's agent writes the original plan back (task a unticked): a stays ticked."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config("true"))
    agents = team({})
    agents.script["the-developer"]["Create module b"][0]["write"] = {
        "src/b.py": "b = 1\n",
        PLAN: PLAN_TEXT,
    }
    assert run(new_item(root, config("true")), agents).status == "completed"
    assert executed(agents) == [A, B, C]
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")
    restored = [e["task"] for e in journal(root) if e["event"] == "implement.plan_restored"]
    assert restored == [B]


def test_an_executor_that_deletes_the_plan_has_it_put_back(tmp_path: Path) -> None:
    """A deleted PLAN.md is put back as it was (no internal error); the run completes."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config("true"))
    agents = team({"delete": [PLAN]})
    assert run(new_item(root, config("true")), agents).status == "completed"
    assert executed(agents) == [A, B, C]
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")
    restored = [e for e in journal(root) if e["event"] == "implement.plan_restored"]
    assert [(e["task"], e["removed"]) for e in restored] == [(A, True), (B, True)]


def test_without_reviews_the_plan_is_put_back_before_the_tick(tmp_path: Path) -> None:
    """--no-review: no reviewer is chosen, and the plan is still put back before the tick."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config("true"))
    agents = team({"write": {}})
    agents.script["the-developer"]["Create module a"][0]["write"] = {
        "src/a.py": "a = 1\n",
        PLAN: FORGED,
    }
    assert run(new_item(root, config("true")), agents, no_review=True).status == "completed"
    assert executed(agents) == [A, B, C]
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")


def test_a_plan_deleted_while_a_decision_waits_is_a_one_line_error(tmp_path: Path) -> None:
    """A person deletes PLAN.md while an escalation waits, then answers it: the next run
    stops with one line naming the plan (exit 2), not an internal error."""
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "NEEDS_REVISION\nCompare the signature in constant time."}]},
    }
    root = scripted_repo(tmp_path, script, max_cycles=1)
    assert cli(root, "implement", "006").returncode == 3
    (root / PLAN).unlink()
    assert cli(root, "answer", "006", f"escalate-{SIGN}", "skip_with_warning").returncode == 0
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0]
    assert f"{PLAN}: no such file" in lines[0]
