"""Dynamic reviewer selection (seed 004: Dynamic Review Selection Algorithm, Review
Selection Pattern, Pattern-Based Recovery; issue rule 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from implement_helpers import (
    FIXTURES,
    Team,
    cycles_file,
    journal,
    key,
    make_repo,
    new_item,
    run,
)

from phasegate.implement.agents import read_agent_file
from phasegate.implement.selection import analyze_changes, rank_reviewers


@pytest.mark.parametrize(
    ("files", "added", "priority"),
    [
        (["src/auth/login.py"], "def login(password): ...", "security"),
        (["db/migrations/003_users.sql"], "ALTER TABLE users ADD COLUMN x;", "data integrity"),
        (["src/core/plugins.py"], "class PluginLayer: ...", "architecture"),
        (["src/cache.py"], "cache = LRU(1024)  # latency", "performance"),
        (["api/endpoints/orders.py"], "@route('/orders')", "integration"),
    ],
)
def test_priorities_come_from_the_changed_files_and_their_content(
    files: list[str], added: str, priority: str
) -> None:
    """analyzeChanges: authentication, database, patterns, caching, APIs -> the seed's five."""
    analysis = analyze_changes("Update the module", [], files, added)
    assert priority in analysis.priorities


def agents() -> list[Any]:
    found = []
    for path in sorted((FIXTURES / "agents").glob("*.md")):
        agent, _ = read_agent_file(path, FIXTURES)
        found.append(agent)
    return found


def test_review_focus_is_honoured_over_inferred_concerns() -> None:
    """review_focus names what to review for: it outweighs what the changes suggest."""
    analysis = analyze_changes(
        "Cache session lookups", ["performance"], ["src/cache/sessions.py"], "token cache"
    )
    assert analysis.priorities[0] == "performance"
    assert rank_reviewers(agents(), analysis)[0].agent == "the-site-reliability-engineer"


def test_common_words_never_count_as_shared_expertise() -> None:
    """reasonAboutBestReviewer: an agent shares a task's subject, not its small words
    ("capped at one hour" and "the pager at 3 a.m." have nothing in common)."""
    analysis = analyze_changes(
        "Retry failed deliveries with backoff\n- Exponential backoff capped at one hour",
        [],
        [],
        "",
    )
    ranked = {r.agent: r for r in rank_reviewers(agents(), analysis)}
    assert "at" not in analysis.words and "one" not in analysis.words
    assert ranked["the-site-reliability-engineer"].shared == ()


PLAN_REVIEW_FALSE = """# Plan

## Phase 1: Docs

- [ ] **Write the changelog** [`agent: the-technical-writer`] [`review: false`]
"""


def test_review_false_skips_the_review(tmp_path: Path) -> None:
    """[`review: false`]: no reviewer is asked; the task is ticked once implemented."""
    root = make_repo(tmp_path / "repo", PLAN_REVIEW_FALSE)
    team = Team({"the-technical-writer": {"*": [{"write": {"CHANGELOG.md": "# 1.0\n"}}]}})
    assert run(new_item(root), team).status == "completed"
    assert team.reviewers() == []
    skipped = [e for e in journal(root) if e["event"] == "reviewer.skipped"]
    assert skipped and skipped[0]["reason"] == "the selector chose no reviewer"
    assert "- [x] **Write the changelog**" in (root / "docs/specs/006-webhooks/PLAN.md").read_text()


AUTH_TASKS = "\n".join(
    f"- [ ] **Harden token check {n}** [`agent: the-developer`]\n  - Validate the JWT expiry\n"
    for n in range(1, 4)
)
AUTH_PLAN = f"# Plan\n\n## Phase 1: Tokens\n\n{AUTH_TASKS}"


def test_a_reviewer_failing_more_than_seventy_percent_is_replaced(tmp_path: Path) -> None:
    """failure_rate > 0.7 for the intended reviewer: an alternative reviews instead, and the
    reason says so (the rate counts once the reviewer has enough reviews)."""
    root = make_repo(tmp_path / "repo", AUTH_PLAN)
    config = {
        "workflows": {"implement": {"settings": {"max_cycles": 2, "failure_rate_min_reviews": 3}}}
    }
    team = Team(
        {
            "the-developer": {"*": [{"write": {"src/auth/token.py": "def check(t): ...\n"}}]},
            "the-security-engineer": {"*": [{"text": "NEEDS_REVISION\nTokens never expire."}]},
            "*": {"*": [{"text": "APPROVED"}]},
        }
    )
    answers = {f"escalate-{key(f'Harden token check {n}')}": "accept_as_is" for n in (1, 2, 3)}
    assert run(new_item(root, config), team, answers=answers).status == "completed"
    reviewers = team.reviewers()
    assert reviewers[:3] == ["the-security-engineer"] * 3
    assert "the-security-engineer" not in reviewers[3:]
    switched = [
        e
        for e in journal(root)
        if e["event"] == "reviewer.selected" and "failure rate" in e["reason"]
    ]
    assert (
        switched
        and "the-security-engineer's failure rate 1.00 over 3 reviews" in (switched[0]["reason"])
    )
    rates = cycles_file(root)["sessions"]["006"]["global_patterns"]["reviewer_failure_rates"]
    assert rates["the-security-engineer"] == {
        "total_reviews": 3,
        "revisions_required": 3,
        "failure_rate": 1.0,
    }


RATE_PLAN = """# Plan

## Phase 1: Login

- [ ] **Protect the login endpoint** [`agent: the-developer`] [`review_focus: security`]
"""


def recurring(tmp_path: Path, feedback: str) -> tuple[Path, Team]:
    root = make_repo(tmp_path / "repo", RATE_PLAN)
    config = {"workflows": {"implement": {"settings": {"max_cycles": 4}}}}
    team = Team(
        {
            "the-developer": {"*": [{"write": {"src/login.py": "def login(): ...\n"}}]},
            "the-security-engineer": {"*": [{"text": f"NEEDS_REVISION\n{feedback}"}]},
            "the-architect": {"*": [{"text": "APPROVED"}]},
        }
    )
    assert run(new_item(root, config), team).status == "completed"
    return root, team


def test_an_issue_seen_twice_switches_to_the_specialist(tmp_path: Path) -> None:
    """same_issue_count >= 2: recurring rate limiting switches to the-architect (the seed's
    specialisations map), and the switch is logged with its reason."""
    root, team = recurring(tmp_path, "Add rate limiting to the login endpoint.")
    assert team.reviewers() == ["the-security-engineer"] * 3 + ["the-architect"]
    (pattern,) = [e for e in journal(root) if e["event"] == "implement.pattern"]
    assert pattern["reason"] == "Recurring rate_limiting issues detected, switching to specialist"
    task = cycles_file(root)["sessions"]["006"]["tasks"][key("Protect the login endpoint")]
    assert task["pattern_tracking"] == {
        "same_issue_count": 2,
        "recurring_patterns": ["missing_rate_limiting"],
    }
    common = cycles_file(root)["sessions"]["006"]["global_patterns"]["common_issues"]
    assert common == [
        {"pattern": "missing_rate_limiting", "count": 3, "suggested_reviewer": "the-architect"}
    ]


def test_recurring_issues_without_a_specialist_escalate_to_the_architect(tmp_path: Path) -> None:
    """No specialisation matches: "Escalating to architect after recurring issues"."""
    root, team = recurring(tmp_path, "Log lines leak the user's email address.")
    assert team.reviewers()[-1] == "the-architect"
    (pattern,) = [e for e in journal(root) if e["event"] == "implement.pattern"]
    assert pattern["reason"] == "Escalating to architect after recurring issues"
