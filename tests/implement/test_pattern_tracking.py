"""Seed 004's Pattern Tracking Logic (trackRecurringPatterns, suggestAlternativeReviewer)
and the session's failure rates, step by step."""

from __future__ import annotations

from typing import Any

import pytest

from phasegate.implement.patterns import (
    count_review,
    extract_patterns,
    suggest_alternative_reviewer,
    track_recurring_patterns,
)


def test_a_new_pattern_is_remembered_and_a_repeat_counts() -> None:
    """A pattern seen for the first time joins recurring_patterns; seen again, it counts."""
    tracking: dict[str, Any] = {"same_issue_count": 0, "recurring_patterns": []}
    assert track_recurring_patterns(tracking, ["missing_rate_limiting"], "x") is None
    assert tracking == {"same_issue_count": 0, "recurring_patterns": ["missing_rate_limiting"]}
    assert track_recurring_patterns(tracking, ["missing_rate_limiting"], "x") is None
    assert tracking["same_issue_count"] == 1


def test_the_second_repeat_suggests_the_specialist() -> None:
    """same_issue_count >= 2: the specialisation map names the alternative reviewer."""
    tracking = {"same_issue_count": 1, "recurring_patterns": ["slow_queries_performance"]}
    found = track_recurring_patterns(
        tracking, ["slow_queries_performance"], "the-security-engineer"
    )
    assert found is not None
    assert found.agent == "the-site-reliability-engineer"
    assert found.reason == "Recurring performance issues detected, switching to specialist"


def test_the_first_recurring_pattern_decides_and_stops_the_loop() -> None:
    """As in the seed, a suggestion returns at once: later patterns are not tracked."""
    tracking = {"same_issue_count": 1, "recurring_patterns": ["authentication"]}
    track_recurring_patterns(tracking, ["authentication", "new_pattern"], "the-architect")
    assert tracking["recurring_patterns"] == ["authentication"]


@pytest.mark.parametrize(
    ("pattern", "current", "agent"),
    [
        ("missing_rate_limiting", "the-security-engineer", "the-architect"),
        ("authentication", "the-architect", "the-security-engineer"),
        ("performance", "the-architect", "the-site-reliability-engineer"),
        ("data_integrity", "the-architect", "the-data-engineer"),
        ("api_design", "the-security-engineer", "the-architect"),
        ("authentication", "the-security-engineer", "the-architect"),
        ("naming", "the-developer", "the-architect"),
    ],
)
def test_specialisations_map_then_the_architect(pattern: str, current: str, agent: str) -> None:
    """suggestAlternativeReviewer: the specialist unless already reviewing, else the architect."""
    found = suggest_alternative_reviewer(pattern, current)
    assert found is not None and found.agent == agent


def test_the_architect_reviewing_already_gets_no_suggestion() -> None:
    """No specialist and the architect already reviewing: no alternative."""
    assert suggest_alternative_reviewer("naming", "the-architect") is None


@pytest.mark.parametrize(
    ("feedback", "patterns"),
    [
        ("Add rate limiting", ["missing_rate_limiting"]),
        ("Rate limiting is too lax for the login endpoint.", ["rate_limiting"]),
        (
            "The JWT is never refreshed. Queries run in a loop (N+1).",
            ["authentication", "performance"],
        ),
        ("Use clearer variable names", ["use_clearer_variable_names"]),
    ],
)
def test_feedback_is_named_by_its_topics(feedback: str, patterns: list[str]) -> None:
    """extractPatterns: one topic a sentence (the most specific), missing_ when it is absent."""
    assert extract_patterns(feedback) == patterns


def test_failure_rate_is_revisions_over_reviews() -> None:
    """reviewer_failure_rates: total_reviews, revisions_required, failure_rate."""
    rates: dict[str, Any] = {}
    for revision in (True, True, False, True):
        count_review(rates, "the-security-engineer", revision)
    assert rates["the-security-engineer"] == {
        "total_reviews": 4,
        "revisions_required": 3,
        "failure_rate": 0.75,
    }
