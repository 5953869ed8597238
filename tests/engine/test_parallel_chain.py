"""A parallel foreach whose items can never run at once (each waits for the one before, or
only one is left to run) runs them one at a time in the work tree, as a plain foreach does:
no snapshot commit, no worktree, no branch (README: Parallel tasks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine_helpers import git
from parallel_helpers import FOLDER, Agents, fan_repo, new_item, run, worktrees

from phasegate.engine.nodes.overlap import items_can_overlap

CHAIN = """\
# Tasks

- [ ] T1: The bucket
- [ ] T2: The clock (after T1)
- [ ] T3: The config (after T2)
"""


def events(root: Path) -> list[dict[str, Any]]:
    lines = (root / FOLDER / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_chain_of_items_runs_in_the_work_tree_without_fanning_out(tmp_path: Path) -> None:
    """T3 waits for T2, which waits for T1: the loop does not fan out; each item sees the
    work of the one before in the work tree itself."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = Agents(tasks=CHAIN, delay=0.05)
    assert run(root, agents).status == "completed"
    assert {agents.workdirs[t] for t in ("T1", "T2", "T3")} == {root}
    assert agents.seen["T3"] == ["src/T1.py", "src/T2.py"]
    assert not [e for e in events(root) if e["event"].startswith("fanout.")]
    assert worktrees(root) == []
    assert "phasegate" not in git(root, "for-each-ref", "--format=%(refname)")


def test_items_overlap_only_when_two_still_to_run_are_independent() -> None:
    """Independence is transitive: T3 waits for T1 through T2; an item done in its source
    and not started is skipped, so it cannot overlap with anything."""
    chain = {
        "T1": {"status": "pending", "deps": []},
        "T2": {"status": "pending", "deps": ["T1"]},
        "T3": {"status": "pending", "deps": ["T2"]},
    }
    assert not items_can_overlap(["T1", "T2", "T3"], chain, skip_done=True)
    fork = {**chain, "T3": {"status": "pending", "deps": ["T1"]}}
    assert items_can_overlap(["T1", "T2", "T3"], fork, skip_done=True)
    settled = {**fork, "T2": {"status": "done", "deps": ["T1"]}}
    assert not items_can_overlap(["T1", "T2", "T3"], settled, skip_done=True)
    ticked = {**fork, "T2": {"status": "pending", "deps": ["T1"], "done": True}}
    assert not items_can_overlap(["T1", "T2", "T3"], ticked, skip_done=True)
    assert items_can_overlap(["T1", "T2", "T3"], ticked, skip_done=False)
    looped = {"A": {"status": "pending", "deps": ["B"]}, "B": {"status": "pending", "deps": ["A"]}}
    assert not items_can_overlap(["A", "B"], looped, skip_done=True)
