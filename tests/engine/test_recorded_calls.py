"""The journal index a resumed run consults before calling an agent or running checks."""

from __future__ import annotations

from pathlib import Path

from phasegate.engine.recorded import RecordedCalls
from phasegate.state.journal import Journal

#: A call's key: node path, visit, iteration, stage, try (the engine owns it).
KEY = "specify#3/2/execute/0"


def dispatched(journal: Journal, attempt: str, key: str = KEY) -> None:
    journal.append("agent.dispatched", key=key, attempt=attempt, role="executor", phase="specify")


def test_a_successful_recorded_result_is_found_by_its_call_key(tmp_path: Path) -> None:
    """Principle 3: a result journaled for this very call is reused, not redone."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "a1")
    journal.append("agent.finished", key=KEY, attempt="a1", ok=True, text="done")
    found = RecordedCalls(journal.events()).result(KEY)
    assert found is not None and found["text"] == "done"


def test_a_failed_result_is_not_reused(tmp_path: Path) -> None:
    """Only successful results count; a failed attempt is made again."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "a1")
    journal.append("agent.finished", key=KEY, attempt="a1", ok=False, error="boom")
    recorded = RecordedCalls(journal.events())
    assert recorded.result(KEY) is None
    assert recorded.abandoned(KEY) is None


def test_an_attempt_without_a_result_is_reported_abandoned(tmp_path: Path) -> None:
    """A call the run died in is named, so the journal says it was dispatched again."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "a1")
    journal.append("agent.finished", key=KEY, attempt="a1", ok=False, error="boom")
    dispatched(journal, "a2")
    recorded = RecordedCalls(journal.events())
    assert recorded.result(KEY) is None
    assert recorded.abandoned(KEY) == "a2"


def test_results_of_another_visit_or_iteration_do_not_match(tmp_path: Path) -> None:
    """A node entered again (new visit) never reuses the old visit's answers."""
    journal = Journal(tmp_path / "j.jsonl")
    dispatched(journal, "old", key="specify#2/2/execute/0")
    journal.append("agent.finished", key="specify#2/2/execute/0", attempt="old", ok=True)
    dispatched(journal, "other", key="specify#3/1/execute/0")
    journal.append("agent.finished", key="specify#3/1/execute/0", attempt="other", ok=True)
    assert RecordedCalls(journal.events()).result(KEY) is None


def test_a_completed_check_round_is_recorded_and_a_partial_one_is_not(tmp_path: Path) -> None:
    """Checks (a test suite can be slow) are not run again once their round was recorded."""
    journal = Journal(tmp_path / "j.jsonl")
    journal.append("check.finished", node="implement", iteration=1, check="test", passed=True)
    assert RecordedCalls(journal.events()).checks("implement#4/1/checks") is None
    outcome = {"name": "test", "command": "true", "passed": True}
    journal.append("checks.completed", key="implement#4/1/checks", outcomes=[outcome])
    recorded = RecordedCalls(journal.events())
    assert recorded.checks("implement#4/1/checks") == [outcome]
    assert recorded.checks("implement#5/1/checks") is None


def test_an_answer_journaled_by_another_process_is_found(tmp_path: Path) -> None:
    """A decision answered with ``phasegate answer`` while no run held the item is found by
    the next run (gate id and visit), so it is used, not asked again."""
    journal = Journal(tmp_path / "j.jsonl")
    journal.append("decision.answered", id="UD-X", visit=2, choice="approved", by="command")
    recorded = RecordedCalls(journal.events())
    assert recorded.answer("UD-X", 2) is not None
    assert recorded.answer("UD-X", 1) is None
