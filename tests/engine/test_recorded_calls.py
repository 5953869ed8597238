"""The journal index a resumed run consults before calling an agent or running checks."""

from __future__ import annotations

from pathlib import Path

from phasegate.engine.recorded import RecordedCalls, call_key
from phasegate.state.journal import Journal

KEY = call_key("executor", "specify", 3, 2, "execute")


def dispatched(journal: Journal, attempt: str, iteration: int = 2, epoch: int = 3) -> None:
    journal.append(
        "agent.dispatched",
        attempt=attempt,
        role="executor",
        phase="specify",
        epoch=epoch,
        iteration=iteration,
        stage="execute",
    )


def test_a_successful_recorded_result_is_found_by_its_call_key(tmp_path: Path) -> None:
    """Principle 3: a result journaled for this very call is reused, not redone."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "a1")
    journal.append("agent.finished", attempt="a1", ok=True, text="done")
    found = RecordedCalls(journal.events()).result(KEY)
    assert found is not None and found["text"] == "done"


def test_a_failed_result_is_not_reused(tmp_path: Path) -> None:
    """Only successful results count; a failed attempt is made again."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "a1")
    journal.append("agent.finished", attempt="a1", ok=False, error="boom")
    recorded = RecordedCalls(journal.events())
    assert recorded.result(KEY) is None
    assert recorded.abandoned(KEY) is None


def test_an_attempt_without_a_result_is_reported_abandoned(tmp_path: Path) -> None:
    """A call the run died in is named, so the journal says it was dispatched again."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "a1")
    journal.append("agent.finished", attempt="a1", ok=False, error="boom")
    dispatched(journal, "a2")
    recorded = RecordedCalls(journal.events())
    assert recorded.result(KEY) is None
    assert recorded.abandoned(KEY) == "a2"


def test_results_of_another_epoch_or_iteration_do_not_match(tmp_path: Path) -> None:
    """A phase restarted fresh (new epoch) never reuses the old run's answers."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "old", epoch=2)
    journal.append("agent.finished", attempt="old", ok=True, text="stale")
    dispatched(journal, "other", iteration=1)
    journal.append("agent.finished", attempt="other", ok=True, text="iteration 1")
    assert RecordedCalls(journal.events()).result(KEY) is None


def test_a_completed_check_round_is_recorded_and_a_partial_one_is_not(tmp_path: Path) -> None:
    """Checks (a test suite can be slow) are not run again once their round was recorded."""
    journal = Journal(tmp_path / "j.jsonl")
    journal.append("check.finished", phase="implement", iteration=1, check="test", passed=True)
    assert RecordedCalls(journal.events()).checks("implement", 4, 1) is None
    outcome = {"name": "test", "command": "true", "passed": True}
    journal.append("checks.completed", phase="implement", epoch=4, iteration=1, outcomes=[outcome])
    recorded = RecordedCalls(journal.events())
    assert recorded.checks("implement", 4, 1) == [outcome]
    assert recorded.checks("implement", 5, 1) is None
