"""A state file whose usage totals were set to null by hand: the state's check lets null
pass (as a total not counted yet), so the next agent call counts from zero instead of
stopping the run with "internal error" after the agent was paid for."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import item_run_until
from engine_helpers import phasegate_cli as phasegate

STATE = Path("docs/features/x/.engine.json")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the approving scripted agents and item ``x`` run to brainstorm."""
    return item_run_until(tmp_path / "repo", "brainstorm")


@pytest.mark.parametrize("field", ["usage", "usage_by_role"])
def test_a_usage_total_set_to_null_counts_the_next_calls(repo: Path, field: str) -> None:
    data = json.loads((repo / STATE).read_text())
    data[field] = None
    (repo / STATE).write_text(json.dumps(data))
    resumed = phasegate(repo, "run", "x", "--until", "specify")
    assert resumed.returncode == 0, resumed.stderr
    assert "internal error" not in resumed.stderr
    after = json.loads((repo / STATE).read_text())
    assert after["usage"]["calls"] >= 2
    assert after["usage_by_role"]["executor"]["calls"] >= 1
