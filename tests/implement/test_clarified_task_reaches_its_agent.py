"""Seed 004: an agent answering BLOCKED is a decision for a person, and "retry with
clarified context". A person clarifies the task's sub-items in PLAN.md and answers
`retry`: the agent's next prompt (and its reviewer's) carries the plan's sub-items as
they are now, not as they were when the phase began."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, Team, key, make_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.errors import WaitingForHuman

PLAN_TEXT = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
  - HMAC over the raw body
"""
CLARIFIED = "HMAC-SHA256 over the raw body, key from WEBHOOK_SECRET"


def text(request: AgentRequest) -> str:
    return "\n".join(part.body for part in request.prompt)


def test_a_retry_after_blocked_gives_the_agent_the_clarified_sub_items(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", PLAN_TEXT)

    def implement(request: AgentRequest) -> dict[str, Any]:
        if "WEBHOOK_SECRET" not in text(request):
            return {"text": "BLOCKED: which hash, and where is the key?"}
        return {"text": "done", "write": {"src/sign.py": "import hmac\n"}}

    team = Team({"the-developer": {"*": [implement]}, "*": {"*": [{"text": "APPROVED"}]}})
    repo = new_item(root)
    with pytest.raises(WaitingForHuman):
        run(repo, team)
    plan = root / PLAN
    plan.write_text(plan.read_text().replace("HMAC over the raw body", CLARIFIED))
    repo.answer("006", f"blocked-{key('Sign outgoing payloads')}", "retry")

    outcome = run(repo, team)
    assert outcome.status == "completed", outcome.message
    prompts = [text(r) for r in team.calls(role="the-developer")]
    assert len(prompts) == 2 and CLARIFIED in prompts[1], prompts[-1]
    reviews = [text(r) for r in team.calls(stage="review")]
    assert reviews and CLARIFIED in reviews[-1], reviews[-1]
    assert "- [x] **Sign outgoing payloads**" in plan.read_text()
