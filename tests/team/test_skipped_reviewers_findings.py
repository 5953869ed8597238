"""A gate whose every reviewer was skipped (its ``when`` did not hold) is not "approved".

Per-batch review: T1 is risky behaviour (QA and Security review it), T2 is documentation
only (QA and Security do not apply). The per-task QA/Security gates of T2 and the final
QA/Security pass (both already ran on T1) dispatch nobody: status, the journal and the
completion summary say the review was skipped, and the Definition of Done still passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from team_helpers import (
    ITEM,
    in_process,
    journal,
    run_through,
    team_script,
)

GATES = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}
SKIPPED = ("tasks[T2]/qa", "tasks[T2]/security", "final-qa", "final-security")


def _completed(events: list[dict[str, Any]], node: str) -> dict[str, Any]:
    found = [e for e in events if e["event"] == "phase.completed" and e["node"] == node]
    assert found, f"no phase.completed for {node}"
    return found[-1]


def test_gates_whose_reviewers_were_all_skipped_say_skipped(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo, agents = in_process(root, team_script())
    assert run_through(repo, agents, **GATES).status == "completed"

    reviewed = {(r.labels["path"], r.role) for r in agents.requests}
    for path in SKIPPED:
        assert not any(p == path for p, _ in reviewed), f"{path} dispatched an agent"
    # The gates that did dispatch their reviewer stay approved.
    assert ("tasks[T1]/qa", "qa") in reviewed
    assert ("tasks[T1]/security", "security") in reviewed

    events = journal(root)
    skipped_events = {e["node"] for e in events if e["event"] == "reviewer.skipped"}
    assert set(SKIPPED) <= skipped_events
    for path in SKIPPED:
        assert _completed(events, path)["review"] == "skipped", path
    for path in ("tasks[T1]/qa", "tasks[T1]/security", "tasks[T2]/review", "final-review"):
        assert _completed(events, path)["review"] == "approved", path

    state = repo.state(ITEM)
    for path in SKIPPED:
        found = state.peek(path)
        assert found is not None
        assert found.get("review") == "skipped", path
        assert found.get("verified") is None, path  # not verified by anyone
        assert not found.records("iterations"), path  # no review history section

    status = repo.status(ITEM)
    rows = {p["node"]: p for p in status["phases"]}
    for node in ("final-qa", "final-security"):
        assert rows[node]["review"] == "skipped", rows[node]
    assert rows["final-review"]["review"] == "approved"

    # Counted review iterations: every reviewer verdict, and no skipped gate.
    verdicts = [e for e in events if e["event"] == "review.verdict"]
    summary = str(status["summary"])
    assert f"in {len(verdicts)} review iteration" in summary, (summary, len(verdicts))
    # The Definition of Done passed: the run completed without a skipped QA blocking it.
    assert status["status"] == "completed"


def test_a_reviewer_that_ran_keeps_the_node_approved_even_if_another_was_skipped(
    tmp_path: Path,
) -> None:
    """Single-final: one combined pass where every reviewer applies stays approved."""
    script = team_script("single-final")
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    gates = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "single-final"}
    assert run_through(repo, agents, **gates).status == "completed"
    events = journal(root)
    for path in ("final-review", "final-qa", "final-security"):
        assert _completed(events, path)["review"] == "approved", path
