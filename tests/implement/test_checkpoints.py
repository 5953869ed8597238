"""Validation checkpoints between phases (issue rule 10; seed 004: Context Ingestion Pattern,
"Validation checkpoints"; the-startup's "**Validation**" items)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, Team, journal, key, new_item, run

from phasegate.engine.state import read_state_file
from phasegate.errors import BlockedError, ConfigError
from phasegate.implement.plan import parse_plan

CHECKPOINT = "Validation: run the unit tests of the dispatcher"


def team() -> Team:
    return Team(
        {
            "the-data-engineer": {"*": [{"write": {"db/001.sql": "CREATE TABLE d (id int);\n"}}]},
            "the-developer": {"*": [{"write": {"src/sign.py": "import hmac\n"}}]},
            "the-technical-writer": {"*": [{"write": {"docs/headers.md": "# Headers\n"}}]},
            "*": {"*": [{"text": "APPROVED"}]},
        }
    )


def check(code: int, output: str = "") -> str:
    return f"{sys.executable} -c \"print('{output}'); raise SystemExit({code})\""


def ticked(root: Path, title: str) -> bool:
    task = next(
        t for t in parse_plan((root / PLAN).read_text(), root / PLAN).tasks() if t.title == title
    )
    return task.done


def test_a_passing_checkpoint_is_ticked_and_the_next_phase_runs(webhooks: Path) -> None:
    """The configured checks pass: the checkpoint is ticked, phase 2 runs; a task ticked
    before the run is not done again."""
    agents = team()
    item = new_item(webhooks, {"commands": {"test": check(0, "12 passed")}})
    assert run(item, agents).status == "completed"
    assert ticked(webhooks, CHECKPOINT)
    assert any(c.role == "the-technical-writer" for c in agents.calls())
    assert all(c.labels["task"] != key("Sketch the dispatcher loop") for c in agents.calls())


def test_the_plans_parallel_marks_are_kept_on_each_task(webhooks: Path) -> None:
    """Phase 2 is marked **Execution: Parallel**: its tasks carry Task.parallel in the state
    (for a parallel foreach); phase 1's do not. The tasks still run one after the other."""
    run(new_item(webhooks), team())
    engine = read_state_file(webhooks / ".phasegate/implement/006/.engine.json").to_dict()
    marks = {
        key: entry["parallel"]
        for path, node in engine["nodes"].items()
        if path.endswith("/tasks")
        for key, entry in node["items"].items()
    }
    assert marks == {
        key("Create the delivery queue table"): False,
        key("Sketch the dispatcher loop"): False,
        key("Sign outgoing payloads"): False,
        key("Retry failed deliveries with backoff"): True,
        key("Document the webhook headers"): True,
    }


def test_a_failing_checkpoint_stops_before_the_next_phase(webhooks: Path) -> None:
    """A failing check stops the run (exit 4) with its failure, before any task of the next
    phase; fixed, the next run checks again and goes on."""
    agents = team()
    config: dict[str, Any] = {"commands": {"test": check(1, "3 failed")}}
    item = new_item(webhooks, config)
    with pytest.raises(BlockedError) as blocked:
        run(item, agents)
    assert "check 'test'" in str(blocked.value) and "failed with exit code 1" in str(blocked.value)
    assert not any(c.role == "the-technical-writer" for c in agents.calls())
    assert not ticked(webhooks, CHECKPOINT)
    item.config = item.config.model_copy(update={"commands": {"test": check(0)}})
    assert run(item, agents).status == "completed"
    assert ticked(webhooks, CHECKPOINT)


def test_the_checks_setting_chooses_the_checkpoint_commands(webhooks: Path) -> None:
    """workflows.implement.settings.checks names which configured commands a checkpoint runs."""
    config = {
        "commands": {"test": check(1), "lint": check(0)},
        "workflows": {"implement": {"settings": {"checks": ["lint"]}}},
    }
    assert run(new_item(webhooks, config), team()).status == "completed"
    finished = [e for e in journal(webhooks) if e["event"] == "check.finished"]
    assert [e["check"] for e in finished] == ["lint"]


def test_a_check_naming_no_command_stops_the_run_before_any_agent(webhooks: Path) -> None:
    """A `checks:` name missing from `commands:` (a typo) would be skipped and the checkpoint
    counted as passed: the run refuses it with its field before any agent runs."""
    config = {
        "commands": {"test": check(0), "lint": check(0)},
        "workflows": {"implement": {"settings": {"checks": ["lint", "tets"]}}},
    }
    agents = team()
    with pytest.raises(ConfigError) as refused:
        run(new_item(webhooks, config), agents)
    assert str(refused.value).endswith(
        "config.yaml: workflows.implement.settings.checks.1: no command 'tets' in commands "
        "(known: test, lint)"
    )
    assert agents.calls() == []
    assert not ticked(webhooks, CHECKPOINT)


def test_a_checkpoint_without_configured_checks_is_not_ticked(webhooks: Path) -> None:
    """Nothing to run is not a validation: the checkpoint stays open, and the run says so."""
    assert run(new_item(webhooks), team()).status == "completed"
    assert not ticked(webhooks, CHECKPOINT)
    assert any(e["event"] == "implement.checkpoint_unverified" for e in journal(webhooks))


def test_the_phase_items_layout_ticks_tasks_checkpoints_and_phases(tmp_path: Path) -> None:
    """the-startup's later template end to end: each task, its phase's `Validate` item and
    the phase's own checkbox are ticked; the task ticked before the run is not redone."""
    from implement_helpers import FIXTURES, make_repo

    root = make_repo(tmp_path / "repo", (FIXTURES / "plan-phase-items.md").read_text())
    agents = Team(
        {
            "implementer": {"*": [{"write": {"src/search.py": "def tokens(s): ...\n"}}]},
            "the-developer": {"*": [{"write": {"src/tokens.py": "STOP = set()\n"}}]},
            "*": {"*": [{"text": "APPROVED"}]},
        }
    )
    assert run(new_item(root, {"commands": {"test": check(0)}}), agents).status == "completed"
    plan = parse_plan((root / PLAN).read_text(), root / PLAN)
    assert all(t.done for t in plan.tasks())
    assert all(p.checked for p in plan.phases)
    text = (root / PLAN).read_text()
    assert "- [x] T001 Search Index Foundation" in text
    assert "- [x] T002 Query Endpoints" in text
    assert "    - [x] T001.4 Validate" in text
    assert all(c.labels["task"] != key("T001.1 Prime Context") for c in agents.calls())
    assert "- [ ] Phases start with tests" in text  # outside any phase: left alone
