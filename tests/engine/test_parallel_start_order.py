"""Which ready items a parallel foreach starts first: with room for more than one, those
with the longest chain of items waiting on them (then plan order); one at a time, plan
order, as a plain foreach."""

from __future__ import annotations

from pathlib import Path

import pytest
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run

from phasegate.api import open_repo
from phasegate.errors import WaitingForHuman

#: Two lone tasks first in the plan, then a chain of three.
CHAIN_LAST = """\
# Tasks

- [ ] T1: Lone one
- [ ] T2: Lone two
- [ ] T3: Chain start
- [ ] T4: Chain middle (after T3)
- [ ] T5: Chain end (after T4)
"""

#: T2 holds back a lone task (T3) and a chain of two (T4, T5).
AFTER_T2 = """\
# Tasks

- [ ] T1: Lone one
- [ ] T2: Needed by the rest
- [ ] T3: Lone after T2 (after T2)
- [ ] T4: Chain start after T2 (after T2)
- [ ] T5: Chain end (after T4)
"""


def coded(agents: Agents) -> list[str]:
    return [task for role, task in agents.calls if role == "coder"]


def with_item_gate(root: Path) -> None:
    path = root / ".phasegate" / "workflows" / "fan.yaml"
    path.write_text(
        path.read_text().replace(
            "      - id: coded\n        kind: end\n",
            "      - id: ok\n        kind: gate\n        decision: ok-{{ task }}\n"
            "        question: Keep {{ task }}?\n        choices: {yes: {to: coded}}\n"
            "      - id: coded\n        kind: end\n",
        )
    )


def test_the_start_of_the_longest_chain_goes_first(tmp_path: Path) -> None:
    """parallel: 2 and three tasks ready (T1, T2, T3): T3 starts with T1, before T2, as
    two more tasks wait on it in a chain (plan order would start T1 and T2)."""
    root = fan_repo(tmp_path / "repo", parallel=2)
    new_item(root)
    agents = Agents(tasks=CHAIN_LAST, delay=0.2)
    outcome = run(root, agents)
    assert outcome.status == "completed", outcome.message
    order = coded(agents)
    assert set(order[:2]) == {"T1", "T3"}
    assert sorted(order) == ["T1", "T2", "T3", "T4", "T5"]


def test_the_longest_chain_goes_first_when_the_plan_lists_it_backwards(tmp_path: Path) -> None:
    """``order: document`` keeps the plan's order, where a task may come before the one it
    depends on: the chain T3 <- T4 <- T5, listed end first, still has T3 start with T1."""
    root = fan_repo(tmp_path / "repo", parallel=2)
    path = root / ".phasegate" / "workflows" / "fan.yaml"
    path.write_text(path.read_text().replace("order: deps", "order: document"))
    new_item(root)
    backwards = (
        "# Tasks\n\n- [ ] T1: Lone one\n- [ ] T2: Lone two\n"
        "- [ ] T5: Chain end (after T4)\n- [ ] T4: Chain middle (after T3)\n"
        "- [ ] T3: Chain start\n"
    )
    agents = Agents(tasks=backwards, delay=0.2)
    outcome = run(root, agents)
    assert outcome.status == "completed", outcome.message
    order = coded(agents)
    assert set(order[:2]) == {"T1", "T3"}
    assert order.index("T3") < order.index("T4") < order.index("T5")


@pytest.mark.parametrize("jobs", [None, 1])
def test_a_parallel_loop_run_one_at_a_time_still_waits_for_dependencies(
    tmp_path: Path, jobs: int | None
) -> None:
    """``parallel: 2`` with ``order: document`` and T1 listed before T2, which it needs: the
    two form a chain, so they run one at a time in the work tree, and T2 goes first, as it
    would in parallel (with --jobs 1 too, a third independent task in the plan)."""
    root = fan_repo(tmp_path / "repo", parallel=2)
    path = root / ".phasegate" / "workflows" / "fan.yaml"
    path.write_text(path.read_text().replace("order: deps", "order: document"))
    new_item(root)
    tasks = "# Tasks\n\n- [ ] T1: Use the helper (after T2)\n- [ ] T2: Write the helper\n"
    if jobs == 1:
        tasks += "- [ ] T3: Unrelated\n"
    agents = Agents(tasks=tasks, delay=0.01)
    outcome = run(root, agents, **({"jobs": jobs} if jobs else {}))
    assert outcome.status == "completed", outcome.message
    assert coded(agents)[:2] == ["T2", "T1"]
    assert agents.workdirs["T1"] == root


@pytest.mark.parametrize("how", ["parallel: 1", "--jobs 1"])
def test_one_at_a_time_runs_the_items_in_plan_order(tmp_path: Path, how: str) -> None:
    """parallel: 1, or --jobs 1 on a parallel loop: the items run in plan order."""
    root = fan_repo(tmp_path / "repo", parallel=1 if how == "parallel: 1" else 2)
    new_item(root)
    agents = Agents(tasks=CHAIN_LAST, delay=0.01)
    options = {"jobs": 1} if how == "--jobs 1" else {}
    outcome = run(root, agents, **options)
    assert outcome.status == "completed", outcome.message
    assert coded(agents) == ["T1", "T2", "T3", "T4", "T5"]


def test_a_loop_under_way_resumed_one_at_a_time_goes_on_in_plan_order(
    tmp_path: Path,
) -> None:
    """A parallel loop left under way (T1 and T2 at their gates) goes on one item at a time
    with --jobs 1: once T2 is done, T3 then T4 (plan order), not T4 first."""
    root = fan_repo(tmp_path / "repo", parallel=2)
    with_item_gate(root)
    new_item(root)
    first = Agents(tasks=AFTER_T2, delay=0.01)
    with pytest.raises(WaitingForHuman):
        run(root, first)
    assert sorted(coded(first)) == ["T1", "T2"]
    for key in ("T1", "T2"):
        open_repo(root).answer(ITEM, f"ok-{key}", "yes")
    second = Agents(tasks=AFTER_T2, delay=0.01)
    with pytest.raises(WaitingForHuman):
        run(root, second, jobs=1)
    assert coded(second) == ["T3", "T4"]
