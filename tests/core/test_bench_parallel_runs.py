"""``make bench``'s parallel foreach benchmark runs: its workflow loads (the task list
is a node's output, as validation requires) and a small plan completes through the real
engine, in the work tree and in worktrees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import parallel


@pytest.mark.parametrize("isolation", ["none", "worktree"])
def test_a_small_plan_runs_through_the_benchmark(isolation: str) -> None:
    makespan, bound, ideal, listed, calls = parallel.run_once(4, 2, isolation, seed=3)
    assert calls == 4
    assert 0 < ideal <= makespan and 0 < bound <= makespan
    assert bound <= listed  # the same schedule, ready items started in plan order alone
