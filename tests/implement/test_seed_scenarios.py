"""Seed 004's three Example Scenarios, end to end with scripted agents on a real git repo."""

from __future__ import annotations

import shutil
from pathlib import Path

from implement_helpers import (
    FIXTURES,
    PLAN,
    Team,
    cycles_file,
    journal,
    key,
    make_repo,
    new_item,
    run,
)

from phasegate.implement.plan import parse_plan

JWT_PLAN = """# Implementation Plan

## Phase 1: Authentication

- [ ] **Implement JWT authentication** [`agent: the-developer`] [`review: true`]
  - Create the auth middleware
  - Validate tokens and sessions
"""
MIDDLEWARE = "def authenticate(token):\n    return verify_jwt(token)\n"
WITH_LIMIT = MIDDLEWARE + "\nLOGIN_ATTEMPTS_PER_MINUTE = 5\n"


def test_security_critical_task_goes_to_the_security_engineer_and_is_revised(
    tmp_path: Path,
) -> None:
    """Scenario 1: JWT auth by the-developer is reviewed by the-security-engineer, who asks
    to "Add rate limiting"; the-developer adds it; the second review approves."""
    root = make_repo(tmp_path / "repo", JWT_PLAN)
    team = Team(
        {
            "the-developer": {
                "*": [
                    {"write": {"src/auth/jwt_middleware.py": MIDDLEWARE}, "text": "middleware"},
                    {"write": {"src/auth/jwt_middleware.py": WITH_LIMIT}, "text": "rate limit"},
                ]
            },
            "the-security-engineer": {
                "*": [{"text": "NEEDS_REVISION\nAdd rate limiting"}, {"text": "APPROVED"}]
            },
        }
    )
    outcome = run(new_item(root), team)
    assert outcome.status == "completed"
    assert team.reviewers() == ["the-security-engineer", "the-security-engineer"]
    revision = team.calls("the-developer")[1].prompt_text()
    assert "Add rate limiting" in revision
    task = cycles_file(root)["sessions"]["006"]["tasks"][key("Implement JWT authentication")]
    assert task["implementer"] == "the-developer"
    assert task["current_cycle"] == 2 and task["max_cycles"] == 3
    assert [(r["agent"], r["cycle"], r["status"]) for r in task["reviewers"]] == [
        ("the-security-engineer", 1, "NEEDS_REVISION"),
        ("the-security-engineer", 2, "APPROVED"),
    ]
    assert task["reviewers"][0]["feedback"] == "Add rate limiting"
    selected = [e for e in journal(root) if e["event"] == "reviewer.selected"]
    assert "security" in selected[0]["priorities"]
    assert "the-security-engineer" in selected[0]["reason"]
    plan = parse_plan((root / PLAN).read_text(), root / PLAN)
    assert plan.tasks()[0].done


QUERY_PLAN = """# Implementation Plan

## Phase 1: Reports

- [ ] **Optimize database queries** [`agent: the-data-engineer`] [`review: true`]
  - Add an index for the report's customer lookup
  - Rewrite the monthly report query
"""


def test_database_optimisation_is_reviewed_by_the_architect(tmp_path: Path) -> None:
    """Scenario 2: the-data-engineer adds indexing and query optimisation; the changes
    (database, performance) select the-architect, who approves with suggestions."""
    root = make_repo(tmp_path / "repo", QUERY_PLAN)
    migration = "CREATE INDEX orders_customer ON orders (customer_id);\n"
    query = "SELECT customer_id, sum(total) FROM orders GROUP BY customer_id;\n"
    team = Team(
        {
            "the-data-engineer": {
                "*": [
                    {
                        "write": {
                            "db/migrations/002_orders_index.sql": migration,
                            "db/queries/monthly_report.sql": query,
                        },
                        "text": "index and query",
                    }
                ]
            },
            "the-architect": {
                "*": [{"text": "APPROVED\nConsider monitoring slow queries after the rollout."}]
            },
        }
    )
    assert run(new_item(root), team).status == "completed"
    assert team.reviewers() == ["the-architect"]
    selected = next(e for e in journal(root) if e["event"] == "reviewer.selected")
    assert selected["priorities"][:2] == ["data integrity", "performance"]
    assert "db/migrations/002_orders_index.sql" in selected["files"]
    review = team.calls("the-architect")[0].prompt_text()
    assert "REVIEW REQUEST [Cycle: 1/3]" in review
    assert "Implemented by: the-data-engineer" in review
    assert "CREATE INDEX orders_customer" in review


AI_PLAN = """# Implementation Plan

## Phase 1: Assistant

- [ ] **Implement AI feature** [`agent: the-developer`]
  - Call the language model with a prompt template
  - Keep the prompt and model settings in one place
"""


def test_a_newly_added_agent_is_selected_without_any_code_change(tmp_path: Path) -> None:
    """Scenario 3: the-ai-engineer, a file added to .claude/agents and named nowhere else,
    is discovered and selected to review an AI feature."""
    root = make_repo(tmp_path / "repo", AI_PLAN)
    item = new_item(root)
    shutil.copy(FIXTURES / "the-ai-engineer.md", root / ".claude" / "agents" / "ai.md")
    code = 'PROMPT = "Summarise: {text}"\nMODEL = "small-llm"\n\ndef ask(model, text):\n'
    code += "    return model.complete(PROMPT.format(text=text))\n"
    team = Team(
        {
            "the-developer": {"*": [{"write": {"src/assistant/llm.py": code}, "text": "done"}]},
            "the-ai-engineer": {"*": [{"text": "LGTM"}]},
        }
    )
    assert run(item, team).status == "completed"
    assert team.reviewers() == ["the-ai-engineer"]
    selected = next(e for e in journal(root) if e["event"] == "reviewer.selected")
    assert "the-ai-engineer" in selected["reason"]
    session = cycles_file(root)["sessions"]["006"]
    assert session["tasks"][key("Implement AI feature")]["reviewers"][0]["agent"] == (
        "the-ai-engineer"
    )
