"""A person's decisions in parallel tasks (seed 004: UNCLEAR requires user clarification;
Escalation "manually fix"; Performance Optimizations, Parallel Execution): a task running
alongside others still stops for a person, the others go on, and a fix by hand is made
where the task's work is, its worktree, which the question names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, key, make_repo, new_item, run
from test_parallel_tasks import FILES, HEADERS, METRICS, PHASES, RETRY, WIRE, Agents

from phasegate.errors import WaitingForHuman
from phasegate.implement.plan import parse_plan

SETTINGS: dict[str, Any] = {
    "workflows": {
        "implement": {"settings": {"max_cycles": 1, "escalation": {"timeout_minutes": 0}}}
    }
}


def ticked(root: Path) -> set[str]:
    plan = parse_plan((root / PLAN).read_text(), root / PLAN)
    return {t.title for t in plan.tasks() if t.done}


def implementer_calls(agents: Agents, title: str) -> int:
    return len(
        [
            r
            for r in agents.team.backend.requests
            if r.labels["task"] == key(title) and r.labels["stage"] != "review"
        ]
    )


def test_an_unclear_review_in_a_parallel_task_asks_a_person_and_the_other_task_finishes(
    tmp_path: Path,
) -> None:
    """The review of one parallel task is unclear: it waits for a person (exit 3 without a
    terminal) while the other is reviewed (ticked once the phase's work is in the work
    tree); the task waiting for both does not start; once approved, the run goes on
    without implementing either task again."""
    root = make_repo(tmp_path / "repo", PHASES)
    item = new_item(root, SETTINGS)
    agents = Agents()
    agents.reviews[RETRY] = ["Great work, but one bug in the header."]
    with pytest.raises(WaitingForHuman, match=f"unclear-{key(RETRY)}"):
        run(item, agents.team)
    # HEADERS is approved, but its work is not in the work tree yet: not ticked before it is.
    assert ticked(root) == set()
    assert METRICS not in agents.spans
    (decision,) = item.decisions("006")
    assert decision["id"] == f"unclear-{key(RETRY)}"
    # The phase's work reaches the work tree when all its tasks are done.
    assert not (root / FILES[HEADERS]).exists()

    item.answer("006", f"unclear-{key(RETRY)}", "approve")
    assert run(item, agents.team).status == "completed"
    assert ticked(root) == {RETRY, HEADERS, METRICS, WIRE}
    assert (root / PLAN).read_text() == PHASES.replace("- [ ]", "- [x]")
    for title in (RETRY, HEADERS, METRICS, WIRE):
        assert implementer_calls(agents, title) == 1, title
        assert (root / FILES[title]).read_text() == f"# {title}\n"


def test_a_manual_fix_of_a_parallel_task_is_made_in_the_worktree_the_question_names(
    tmp_path: Path,
) -> None:
    """An escalated parallel task answered 'manual_fix' pauses; the message and the pending
    question name its worktree (which holds its agent's work, not yet in the work tree);
    the fix made there is reviewed and lands in the work tree with the phase's work."""
    root = make_repo(tmp_path / "repo", PHASES)
    item = new_item(root, SETTINGS)
    agents = Agents()
    agents.reviews[RETRY] = ["NEEDS_REVISION\nRetry with an exponential backoff."]
    with pytest.raises(WaitingForHuman, match=f"escalate-{key(RETRY)}"):
        run(item, agents.team)
    assert ticked(root) == set()
    item.answer("006", f"escalate-{key(RETRY)}", "manual_fix")
    with pytest.raises(WaitingForHuman) as waiting:
        run(item, agents.team)
    message = str(waiting.value)
    found = re.search(r"Fix it in its worktree (\S+) \(", message)
    assert found is not None, message
    where = root / found.group(1)
    assert where.parent == root / ".phasegate" / "worktrees"
    assert f"phasegate answer 006 manual-fix-{key(RETRY)} review" in message
    (decision,) = item.decisions("006")
    assert found.group(1) in decision["question"]
    rows = {row["title"]: row for row in item.status("006")["tasks"]}
    assert (rows[RETRY]["state"], rows[RETRY]["worktree"]) == ("escalated", found.group(1))
    assert (where / FILES[RETRY]).read_text() == f"# {RETRY}\n"
    assert not (root / FILES[RETRY]).exists()

    (where / FILES[RETRY]).write_text("# retried with an exponential backoff, by hand\n")
    item.answer("006", f"manual-fix-{key(RETRY)}", "review")
    agents.reviews[RETRY] = ["APPROVED"]
    assert run(item, agents.team).status == "completed"
    last_review = agents.review_prompts(RETRY)[-1]
    assert "exponential backoff, by hand" in last_review
    assert (root / FILES[RETRY]).read_text() == "# retried with an exponential backoff, by hand\n"
    assert (root / PLAN).read_text() == PHASES.replace("- [ ]", "- [x]")
    assert not where.exists()
