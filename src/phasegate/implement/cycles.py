"""The review-cycle record of a work item, kept in its engine state.

Seed 004's ``.the-startup/review-cycles.json`` is rendered from this record
(:mod:`phasegate.implement.view`): per task (by its hash) the description,
current and maximum cycle, implementer, every reviewer's entry (agent, cycle,
status ``pending`` / ``APPROVED`` / ``NEEDS_REVISION`` / ``UNCLEAR`` /
``TIMEOUT``, feedback, timestamp) and the pattern tracking; per session the
reviewers' failure rates and the common issues. Keys starting with ``_`` are
phasegate's own bookkeeping and are never written to the file.

Every change is keyed by (visit, cycle), so making it again after a resumed
run changes nothing.
"""

from __future__ import annotations

from typing import Any

from phasegate.engine.state import EngineState
from phasegate.errors import BadInputError
from phasegate.implement.patterns import (
    Suggestion,
    count_issues,
    count_review,
    extract_patterns,
    track_recurring_patterns,
)
from phasegate.state.journal import utc_now

KEY = "review_cycles"
FEEDBACK_LIMIT = 2000
#: The statuses a review can end with (``pending`` while it runs).
READABLE = ("APPROVED", "NEEDS_REVISION")


def record(state: EngineState) -> dict[str, Any]:
    """The item's review-cycle record (created empty on first use)."""
    found = state.data.get(KEY)
    if not isinstance(found, dict):
        found = {
            "tasks": {},
            "global_patterns": {"reviewer_failure_rates": {}, "common_issues": []},
        }
        state.data[KEY] = found
    return found


def task_entry(state: EngineState, key: str, description: str) -> dict[str, Any]:
    """The record of task ``key`` (created on first use)."""
    tasks: dict[str, Any] = record(state)["tasks"]
    entry = tasks.get(key)
    if entry is None:
        entry = {
            "description": description,
            "current_cycle": 0,
            "max_cycles": 0,
            "implementer": None,
            "reviewers": [],
            "pattern_tracking": {"same_issue_count": 0, "recurring_patterns": []},
        }
        tasks[key] = entry
    return entry


def peek_task(state: EngineState, key: str) -> dict[str, Any] | None:
    found = state.data.get(KEY)
    if not isinstance(found, dict):
        return None
    entry = (found.get("tasks") or {}).get(key)
    return entry if isinstance(entry, dict) else None


def _review(entry: dict[str, Any], visit: int, cycle: int) -> dict[str, Any] | None:
    return next(
        (r for r in entry["reviewers"] if r.get("_visit") == visit and r.get("cycle") == cycle),
        None,
    )


def reviewer_selected(
    entry: dict[str, Any], agent: str, visit: int, cycle: int, max_cycles: int
) -> None:
    """A reviewer was chosen for ``cycle``: its entry is ``pending`` until it answers.

    The implementer never reviews its own work: when it is the only agent there is to
    choose, the run stops (exit 2) before any review, with the ways out.
    """
    implementer = entry.get("implementer")
    if implementer and agent == implementer:
        raise BadInputError(
            f"task {entry.get('description')!r} has no reviewer: its implementer {agent} is "
            f"the only agent here, and it never reviews its own work; add another agent "
            f"(.claude/agents/NAME.md or a roles.NAME entry in .phasegate/config.yaml) "
            f"or mark the task [`review: false`], then run again"
        )
    entry["current_cycle"] = cycle
    entry["max_cycles"] = max_cycles
    found = _review(entry, visit, cycle)
    if found is None:
        entry["reviewers"].append(
            {
                "agent": agent,
                "cycle": cycle,
                "status": "pending",
                "timestamp": utc_now(),
                "_visit": visit,
            }
        )
    elif found["status"] == "pending":
        found["agent"] = agent


def reviewer_answered(
    state: EngineState, entry: dict[str, Any], visit: int, cycle: int, word: str, feedback: str
) -> Suggestion | None:
    """A reviewer answered ``cycle``: its status and feedback, the session's failure rates
    and common issues, and (for a revision) the task's pattern tracking.

    Returns the alternative reviewer the recurring patterns suggest, if any.
    """
    found = _review(entry, visit, cycle)
    if found is None or found["status"] != "pending":
        return None  # answered already (a resumed run), or never selected
    found["status"] = word
    _answered(found, feedback)
    if word not in READABLE:
        return None
    patterns = record(state)["global_patterns"]
    count_review(patterns["reviewer_failure_rates"], found["agent"], word == "NEEDS_REVISION")
    if word != "NEEDS_REVISION":
        return None
    names = extract_patterns(feedback)
    count_issues(patterns["common_issues"], names)
    suggestion = track_recurring_patterns(entry["pattern_tracking"], names, found["agent"])
    if suggestion is not None:  # a switch to a specialist holds for the rest of the task
        entry["_suggested"] = suggestion.to_dict()
    return suggestion


def reviewer_timed_out(entry: dict[str, Any], visit: int, cycle: int, feedback: str) -> None:
    """The review of ``cycle`` ran out of time."""
    found = _review(entry, visit, cycle)
    if found is not None and found["status"] == "pending":
        found["status"] = "TIMEOUT"
        _answered(found, feedback)


def _answered(found: dict[str, Any], feedback: str) -> None:
    """The review's feedback and when it came, in the seed's key order (feedback, timestamp)."""
    found.pop("timestamp", None)
    found["feedback"] = feedback[:FEEDBACK_LIMIT]
    found["timestamp"] = utc_now()


#: How a task ticked in PLAN.md by a person while it waited for a decision ended.
TICKED_BY_HAND = "ticked by hand"
#: How a task the run had not finished ended when it was no longer in PLAN.md.
REMOVED = "removed from the plan"


def outcome(entry: dict[str, Any], how: str, note: str = "") -> None:
    """How the task ended (``approved``, ``accepted``, ``skipped``...), for status."""
    entry["_outcome"] = {"how": how, "note": note}


def _public(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _public(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list):
        return [_public(v) for v in value]
    return value


def session_document(state: EngineState) -> dict[str, Any]:
    """The item's session in seed 004's schema: ``{tasks, global_patterns}``."""
    found = record(state) if isinstance(state.data.get(KEY), dict) else None
    if found is None:
        return {
            "tasks": {},
            "global_patterns": {"reviewer_failure_rates": {}, "common_issues": []},
        }
    document: dict[str, Any] = _public(found)
    return document
