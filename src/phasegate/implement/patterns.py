"""Seed 004's pattern tracking: recurring issues, specialist reviewers, failure rates.

``track_recurring_patterns`` and ``suggest_alternative_reviewer`` follow the
seed's ``trackRecurringPatterns`` / ``suggestAlternativeReviewer`` step for
step (a pattern seen again raises ``same_issue_count``; from 2 on, the first
such pattern names the specialist, else the architect). ``extract_patterns``,
which the seed leaves open, names the topics of a review's feedback:
``rate_limiting``, ``authentication``, ``performance``, ``data_integrity``,
``api_design``, ``error_handling``, ``input_validation``, ``test_coverage`` (one a
sentence, the first of that list it names), prefixed ``missing_`` when the
sentence asks for the thing to be added; other feedback becomes a pattern made of
its first words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Seed 004's map of recurring patterns to specialised reviewers (in its order).
SPECIALIZATIONS: tuple[tuple[str, str], ...] = (
    ("rate_limiting", "the-architect"),
    ("authentication", "the-security-engineer"),
    ("performance", "the-site-reliability-engineer"),
    ("data_integrity", "the-data-engineer"),
    ("api_design", "the-architect"),
)
ARCHITECT = "the-architect"
#: Seed 004: a reviewer type failing more often than this is replaced.
FAILURE_RATE_LIMIT = 0.7

_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        ("rate_limiting", r"rate[\s_-]*limit|throttl"),
        (
            "authentication",
            r"\bauth|\bjwt\b|\btokens?\b|\bsessions?\b|passwords?|\blogin|credential",
        ),
        ("performance", r"performance|\bslow|latency|\bn\s*\+\s*1\b|\bcach(e|ing)\b|optimi[sz]"),
        (
            "data_integrity",
            r"data integrity|transaction|consisten|migration|constraint|foreign key|race condition",
        ),
        ("api_design", r"\bapi\b|endpoint|status code|\bcontract|versioning|\brest\b"),
        ("error_handling", r"error handling|exception|unhandled|\bretr(y|ies)\b"),
        ("input_validation", r"validat|sanitiz|injection|escap(e|ing)\b"),
        ("test_coverage", r"\btests?\b|coverage"),
    )
)
_MISSING = re.compile(r"\b(missing|add|adds|no|lacks?|without|absent|needs?)\b", re.I)
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "to",
        "of",
        "in",
        "on",
        "for",
        "with",
        "is",
        "are",
        "be",
        "it",
        "this",
        "that",
        "these",
        "please",
        "should",
        "must",
        "also",
        "there",
        "here",
    ]
)


@dataclass(frozen=True)
class Suggestion:
    """An alternative reviewer, and why."""

    agent: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"agent": self.agent, "reason": self.reason}


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def extract_patterns(feedback: str) -> list[str]:
    """The issue patterns a review's feedback names, each once, in order of appearance."""
    found: list[str] = []
    for sentence in _sentences(feedback):
        # One pattern a sentence: the most specific topic it names (the list's order).
        name = next((n for n, pattern in _TOPICS if pattern.search(sentence)), None)
        if name is not None:
            label = f"missing_{name}" if _MISSING.search(sentence) else name
            if label not in found:
                found.append(label)
    if not found:
        words = [w for w in re.findall(r"[a-z0-9]+", feedback.lower()) if w not in _STOP]
        if words:
            found.append("_".join(words[:4]))
    return found


def suggest_alternative_reviewer(pattern: str, current_reviewer: str | None) -> Suggestion | None:
    """Seed 004's ``suggestAlternativeReviewer``: the specialist for ``pattern``, else the
    architect, never the reviewer already reviewing."""
    for key, agent in SPECIALIZATIONS:
        if key in pattern and agent != current_reviewer:
            return Suggestion(agent, f"Recurring {key} issues detected, switching to specialist")
    if current_reviewer != ARCHITECT:
        return Suggestion(ARCHITECT, "Escalating to architect after recurring issues")
    return None


def track_recurring_patterns(
    tracking: dict[str, Any], patterns: list[str], current_reviewer: str | None
) -> Suggestion | None:
    """Seed 004's ``trackRecurringPatterns`` on a task's ``pattern_tracking`` (changed in place).

    As in the seed, the first pattern that recurs once ``same_issue_count`` has
    reached 2 decides (the patterns after it are not looked at).
    """
    recurring: list[str] = tracking.setdefault("recurring_patterns", [])
    for pattern in patterns:
        if pattern in recurring:
            tracking["same_issue_count"] = int(tracking.get("same_issue_count", 0)) + 1
            if tracking["same_issue_count"] >= 2:
                return suggest_alternative_reviewer(pattern, current_reviewer)
        else:
            recurring.append(pattern)
    return None


def suggested_reviewer(pattern: str) -> str:
    """Who the session's ``common_issues`` suggest for ``pattern``."""
    for key, agent in SPECIALIZATIONS:
        if key in pattern:
            return agent
    return ARCHITECT


def failure_rate(rates: dict[str, Any], agent: str) -> tuple[float, int]:
    """``(failure_rate, total_reviews)`` of ``agent`` in the session's global patterns."""
    entry = rates.get(agent) or {}
    total = int(entry.get("total_reviews", 0))
    return (float(entry.get("failure_rate", 0.0)) if total else 0.0), total


def count_review(rates: dict[str, Any], agent: str, revision: bool) -> None:
    """Count one review of ``agent`` (a revision request or an approval)."""
    entry = rates.setdefault(
        agent, {"total_reviews": 0, "revisions_required": 0, "failure_rate": 0.0}
    )
    entry["total_reviews"] = int(entry["total_reviews"]) + 1
    entry["revisions_required"] = int(entry["revisions_required"]) + (1 if revision else 0)
    entry["failure_rate"] = round(entry["revisions_required"] / entry["total_reviews"], 2)


def count_issues(common: list[dict[str, Any]], patterns: list[str]) -> None:
    """Count ``patterns`` in the session's ``common_issues`` (most frequent first)."""
    for pattern in patterns:
        entry = next((c for c in common if c.get("pattern") == pattern), None)
        if entry is None:
            common.append(
                {"pattern": pattern, "count": 1, "suggested_reviewer": suggested_reviewer(pattern)}
            )
        else:
            entry["count"] = int(entry["count"]) + 1
    common.sort(key=lambda c: -int(c["count"]))
