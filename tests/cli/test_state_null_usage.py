"""A state file whose usage totals were set to null by hand: the state's check lets null
pass (as a total not counted yet), so the next agent call counts from zero instead of
stopping the run with "internal error" after the agent was paid for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

STATE = Path("docs/features/x/.engine.json")


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the approving scripted agents and item ``x`` run to brainstorm."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    with open(root / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(root, "new", "x", "--mode", "quick").returncode == 0
    assert phasegate(root, "run", "x", "--until", "brainstorm").returncode == 0
    return root


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
