"""A review approving with ✅ while naming a problem on the same line is unclear, and what
it said after the ✅ is not lost: a person who sends the task back for a revision has the
next executor cycle read their note and the reviewer's words."""

from __future__ import annotations

from pathlib import Path

import pytest
from implement_helpers import PLAN, Team, cli, key, make_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.errors import WaitingForHuman

PLAN_TEXT = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
"""
SIGN = key("Sign outgoing payloads")
SAID = "but there is a problem: the signature is compared with == instead of in constant time"


def text(request: AgentRequest) -> str:
    return "\n".join(part.body for part in request.prompt)


def test_the_words_after_a_tick_reach_the_next_executor_cycle(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    team = Team(
        {
            "the-developer": {"*": [{"write": {"src/sign.py": "x = 1\n"}, "text": "done"}]},
            "*": {"*": [{"text": f"✅ {SAID}"}, {"text": "APPROVED"}]},
        }
    )
    repo = new_item(root)
    with pytest.raises(WaitingForHuman):
        run(repo, team)
    answered = cli(root, "answer", "006", f"unclear-{SIGN}", "revise", "--note", "use hmac")
    assert answered.returncode == 0, answered.stderr
    run(repo, team)
    executes = team.calls(role="the-developer", stage="execute")
    assert len(executes) == 2
    prompt = text(executes[1])
    assert "use hmac" in prompt
    assert SAID in prompt, prompt
    assert "approves on its first line" not in prompt
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()
