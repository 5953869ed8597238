"""``.the-startup/review-cycles.json`` (seed 004: State Management, Review Cycle Persistence;
issue rule 8): the seed's schema exactly, one session per item, written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from implement_helpers import Team, cycles_file, key, make_repo, new_item, run

from phasegate.errors import StateCorruptError

PLAN_TEXT = """# Plan

## Phase 1: Login

- [ ] **Implement JWT authentication** [`agent: the-developer`]
  - Validate the token's signature and expiry
"""
TEAM = {
    "the-developer": {"*": [{"write": {"src/auth/jwt.py": "def check(token): ...\n"}}]},
    "the-security-engineer": {
        "*": [{"text": "NEEDS_REVISION\nAdd rate limiting"}, {"text": "APPROVED"}]
    },
}


def test_the_file_has_exactly_the_seeds_schema(tmp_path: Path) -> None:
    """sessions.<id>.tasks.<hash>: description, current_cycle, max_cycles, implementer,
    reviewers (agent, cycle, status, feedback, timestamp), pattern_tracking; then
    global_patterns (reviewer_failure_rates, common_issues) and updated_at."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    run(new_item(root), Team(TEAM))
    data = cycles_file(root)
    assert set(data) == {"sessions", "updated_at"}
    session = data["sessions"]["006"]
    assert set(session) == {"tasks", "global_patterns"}
    task = session["tasks"][key("Implement JWT authentication")]
    assert list(task) == [  # the seed's keys, in the seed's order
        "description",
        "current_cycle",
        "max_cycles",
        "implementer",
        "reviewers",
        "pattern_tracking",
    ]
    assert task["description"] == "Implement JWT authentication"
    assert [list(r) for r in task["reviewers"]] == [
        ["agent", "cycle", "status", "feedback", "timestamp"]
    ] * 2
    assert set(task["pattern_tracking"]) == {"same_issue_count", "recurring_patterns"}
    assert set(session["global_patterns"]) == {"reviewer_failure_rates", "common_issues"}
    rate = session["global_patterns"]["reviewer_failure_rates"]["the-security-engineer"]
    assert set(rate) == {"total_reviews", "revisions_required", "failure_rate"}
    assert set(session["global_patterns"]["common_issues"][0]) == {
        "pattern",
        "count",
        "suggested_reviewer",
    }
    assert data["updated_at"].endswith("Z")


def test_other_sessions_in_the_file_are_kept(tmp_path: Path) -> None:
    """One file, many items: an item rewrites only its own session."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    other = {"tasks": {"abc": {"description": "elsewhere"}}, "global_patterns": {}}
    (root / ".the-startup").mkdir()
    (root / ".the-startup" / "review-cycles.json").write_text(
        json.dumps({"sessions": {"session-id-123": other}, "updated_at": "2024-01-15T10:45:00Z"})
    )
    run(new_item(root), Team(TEAM))
    sessions = cycles_file(root)["sessions"]
    assert sessions["session-id-123"] == other
    assert "006" in sessions
    leftovers = [p.name for p in (root / ".the-startup").iterdir()]
    assert leftovers == ["review-cycles.json"]  # atomic writes leave no temp file


def test_a_corrupt_file_stops_the_run_and_is_left_untouched(tmp_path: Path) -> None:
    """A review-cycles.json that is not JSON stops the run (exit 5) and is never overwritten."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    item = new_item(root)
    path = root / ".the-startup" / "review-cycles.json"
    path.write_bytes(b'{"sessions": {')
    with pytest.raises(StateCorruptError, match=r"review-cycles\.json is corrupt"):
        run(item, Team(TEAM))
    assert path.read_bytes() == b'{"sessions": {'
