"""A task a person adds to PLAN.md while `phasegate implement` runs is not left behind:
once every phase has ended, the run reads the plan again, says how many tasks were added
and does them, before it completes (a task added to a phase not begun yet is read when
that phase begins, as always)."""

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
ADDED = "- [ ] **Rotate the signing key** [`agent: the-developer`]\n"


def test_a_task_added_to_a_finished_phase_during_the_run_is_done(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    plan = root / PLAN

    def review(request: AgentRequest) -> dict[str, Any]:
        if request.labels.get("task") and "Rotate" not in plan.read_text():
            # A person adds a task to phase 1 while its only task is being reviewed.
            text = plan.read_text()
            at = text.index("\n## Phase 2")
            plan.write_text(text[:at] + ADDED + text[at:])
        return {"text": "APPROVED"}

    team = Team(
        {
            "the-developer": {"*": [{"write": {"src/{task}.py": "x = 1\n"}, "text": "done"}]},
            "*": {"*": [review]},
        }
    )
    outcome = run(new_item(root), team)
    assert outcome.status == "completed", outcome.message
    text = plan.read_text()
    assert "- [x] **Rotate the signing key**" in text, text
    assert "- [x] **Sign outgoing payloads**" in text
    assert "- [x] **Document signing**" in text
    implemented = [r.labels.get("task") for r in team.calls(role="the-developer")]
    assert len(implemented) == 3 and len(set(implemented)) == 3  # none done twice
    contexts = [e for e in journal(root) if e["event"] == "implement.context"]
    assert len(contexts) == 2
    assert any(
        "1 task(s) added while the run went on, done now: Rotate the signing key" in note
        for note in contexts[1]["notes"]
    ), contexts[1]
