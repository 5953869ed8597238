"""A budget cap on a workflow role also caps the agents chosen at run time to play it
(README "Budget caps"): implement's ``reviewer`` and ``implementer`` are played by the agents
of ``.claude/agents``, as ``roles.reviewer`` binds their backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import cli, make_repo

PLAN = """# Plan 006

## Phase 1: Core

- [ ] **Add authentication to the API** [`agent: the-developer`]
  - JWT tokens
- [ ] **Write the dispatcher** [`agent: the-developer`]
"""
PRICED = {
    "implementer": {"*": [{"text": "Implemented it.", "write": {"work.txt": "done\n"}}]},
    "reviewer": {"*": [{"verdict": {"verdict": "APPROVED", "summary": "ok", "issues": []}}]},
}


def priced_repo(tmp_path: Path, budget: dict[str, Any]) -> Path:
    """Two tasks; every implementation and every review reports $0.10."""
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        "budget": budget,
    }
    root = make_repo(tmp_path / "repo", PLAN, config=config)
    script = json.loads(json.dumps(PRICED))
    for replies in script.values():
        replies["*"][0]["cost_usd"] = 0.1
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    return root


def test_a_reviewer_cap_caps_the_agents_that_review(tmp_path: Path) -> None:
    """``budget.roles.reviewer: {usd: 0.15}``: the first review ($0.10) goes out, the second
    (estimated at $0.10) would pass the cap, so the run stops at the budget decision (exit 3)
    and status counts the reviewing agents' spend against the cap."""
    root = priced_repo(tmp_path, {"roles": {"reviewer": {"usd": 0.15}}})
    result = cli(root, "implement", "006")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "the budget cap of role reviewer (roles.reviewer.usd) is $0.15" in result.stderr
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    (cap,) = status["budget"]["caps"]
    assert (cap["cap"], cap["spent"]) == ("roles.reviewer.usd", 0.1)


def test_an_implementer_cap_caps_the_agent_a_task_names(tmp_path: Path) -> None:
    """``budget.roles.implementer`` counts the-developer, who plays implementer."""
    root = priced_repo(tmp_path, {"roles": {"implementer": {"usd": 0.15}}})
    result = cli(root, "implement", "006")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "(roles.implementer.usd)" in result.stderr


def test_a_cap_on_an_agents_own_name_is_accepted_and_caps_it(tmp_path: Path) -> None:
    """An agent's own name (an ``.claude/agents`` file) is a role a cap may name."""
    root = priced_repo(tmp_path, {"roles": {"the-developer": {"usd": 0.15}}})
    result = cli(root, "implement", "006")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "(roles.the-developer.usd)" in result.stderr
