"""Once planning is over, no agent adds to the challenged plan: a spec file an implementer
creates under the change's specs/ is removed (and journaled as a violation), so
`archive` merges only the specs the challenger approved into the living specs."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import ChangeAgents, changes, plan_approved

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply

FOLDER = Path("changes/add-oauth")


class SpecAddingImplementer(ChangeAgents):
    """An implementer whose first call also adds a spec of its own to the plan."""

    def __call__(self, request: AgentRequest) -> ScriptedReply | None:
        if request.role == "implementer" and not any(r == "implementer" for r, _ in self.steps):
            self.steps.append(("implementer", "add a spec"))
            folder = request.labels["item_dir"]
            return ScriptedReply(
                write={
                    "app/x.py": "X = 1\n",
                    f"{folder}/specs/billing.md": "# billing\n\nADDED BY THE IMPLEMENTER\n",
                    f"{folder}/specs/api/v2.md": "# v2\n\nADDED BY THE IMPLEMENTER\n",
                },
                text="did it",
            )
        return super().__call__(request)


def test_a_spec_an_implementer_adds_is_removed_and_never_archived(repo: Path) -> None:
    plan_approved(repo)
    outcome = changes(repo).impl(
        "add-oauth", backends={"default": SpecAddingImplementer(repo).backend()}
    )
    assert outcome.status == "complete", outcome.message
    assert not (repo / FOLDER / "specs/billing.md").exists()
    assert not (repo / FOLDER / "specs/api/v2.md").exists()
    events = [
        json.loads(line) for line in (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    ]
    (violation,) = [e for e in events if e["event"] == "agent.violation"]
    words = " ".join(violation.get("kept", [])) + " ".join(violation["paths"])
    assert "changes/add-oauth/specs/billing.md" in words, violation
    assert "changes/add-oauth/specs/api/v2.md" in words, violation
    archived = changes(repo).archive("add-oauth")
    assert sorted(archived.merged) == ["specs/oauth-login.md", "specs/session.md"]
    assert not (repo / "specs/billing.md").exists()
    assert not (repo / "specs/api/v2.md").exists()


def test_specs_the_author_adds_while_planning_stay(repo: Path) -> None:
    """During planning the specs are the proposal author's to write: nothing is removed."""
    plan_approved(repo)
    assert (repo / FOLDER / "specs/session.md").is_file()
    assert (repo / FOLDER / "specs/oauth-login.md").is_file()
