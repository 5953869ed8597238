"""A done task a person unticks in PLAN.md while `phasegate implement` runs (or while it
waits for a person) is done again before the run completes: the run never says it is
complete while PLAN.md has an open task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from implement_helpers import PLAN, Team, journal, make_repo, new_item, run

from phasegate.agents.base import AgentRequest

PLAN_TEXT = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]

## Phase 2: Docs

- [ ] **Document signing** [`agent: the-developer`]
"""


def test_a_task_unticked_during_the_run_is_done_again_before_it_completes(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    plan = root / PLAN
    unticked: list[bool] = []

    def review(request: AgentRequest) -> dict[str, Any]:
        text = plan.read_text()
        if "- [x] **Sign outgoing payloads**" in text and not unticked:
            # A person unticks the done task of phase 1 while phase 2's task is reviewed.
            plan.write_text(text.replace("- [x] **Sign", "- [ ] **Sign"))
            unticked.append(True)
        return {"text": "APPROVED"}

    team = Team(
        {
            "the-developer": {"*": [{"write": {"src/{task}.py": "x = 1\n"}, "text": "done"}]},
            "*": {"*": [review]},
        }
    )
    outcome = run(new_item(root), team)
    assert unticked
    assert outcome.status == "completed", outcome.message
    text = plan.read_text()
    assert "- [x] **Sign outgoing payloads**" in text, text
    assert "- [x] **Document signing**" in text, text
    implemented = [r.labels.get("task") for r in team.calls(role="the-developer")]
    assert len(implemented) == 3 and len(set(implemented)) == 2  # Sign done again
    contexts = [e for e in journal(root) if e["event"] == "implement.context"]
    assert len(contexts) == 2
    assert any(
        "1 task(s) unticked after the run did them, done again now: Sign outgoing payloads" in note
        for note in contexts[1]["notes"]
    ), contexts[1]
