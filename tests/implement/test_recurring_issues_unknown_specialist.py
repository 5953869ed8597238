"""Recurring review issues suggest a specialist (seed 004's trackRecurringPatterns): when
the repository has no such agent, the run does not claim that agent reviews next."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import cli, journal, make_repo

PLAN_TEXT = """# Plan

## Phase 1: X

- [ ] **Write the greeting** [`agent: the-developer`]
"""
REVISE = {
    "verdict": {
        "verdict": "NEEDS_REVISION",
        "summary": "not yet",
        "issues": [{"severity": "high", "description": "greeting is wrong", "location": None}],
    }
}


def test_a_suggested_reviewer_that_is_not_an_agent_is_not_announced_as_next(
    tmp_path: Path,
) -> None:
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        "workflows": {"implement": {"settings": {"max_cycles": 4}}},
    }
    root = make_repo(
        tmp_path / "repo",
        PLAN_TEXT,
        agents=("the-developer", "the-technical-writer"),
        config=config,
    )
    script = {
        "the-developer": {"*": [{"write": {"greet.py": "print('hi')\n"}}]},
        "*": {"*": [REVISE]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))

    result = cli(root, "implement", "006", "--jobs", "1")
    assert result.returncode == 3, result.stdout + result.stderr
    (pattern,) = [e for e in journal(root) if e["event"] == "implement.pattern"][:1]
    assert pattern["suggested"] == "the-architect"
    assert pattern["known"] is False
    shown = result.stdout + result.stderr
    assert "next reviewer the-architect" not in shown
    assert "the-architect would review next" in shown
    assert "not an agent here" in shown
    reviewers = [
        e.get("role")
        for e in journal(root)
        if e["event"] == "agent.dispatched" and "review" in str(e.get("key"))
    ]
    assert "the-architect" not in reviewers
