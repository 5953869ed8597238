"""Once planning is over, no agent rewrites the challenged plan: an implementer's edit of
the change's proposal.md or specs/*.md is put back (and journaled as a violation), so
`archive` merges the specs the challenger approved into the living specs, not an
implementer's rewrite. tasks.md stays the implementer's to tick off."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import ChangeAgents, changes, plan_approved

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply

FOLDER = Path("changes/add-oauth")


class RewritingImplementer(ChangeAgents):
    """An implementer whose first call also rewrites the plan's spec and proposal."""

    def __call__(self, request: AgentRequest) -> ScriptedReply | None:
        if request.role == "implementer" and not any(r == "implementer" for r, _ in self.steps):
            self.steps.append(("implementer", "rewrite"))
            folder = request.labels["item_dir"]
            return ScriptedReply(
                write={
                    "app/x.py": "X = 1\n",
                    f"{folder}/specs/session.md": "# session\n\nREWRITTEN BY THE IMPLEMENTER\n",
                    f"{folder}/proposal.md": "REWRITTEN BY THE IMPLEMENTER\n",
                },
                text="did it",
            )
        return super().__call__(request)


def test_the_plan_an_implementer_rewrote_is_put_back_and_archived_as_approved(
    repo: Path,
) -> None:
    plan_approved(repo)
    spec = (repo / FOLDER / "specs/session.md").read_text()
    proposal = (repo / FOLDER / "proposal.md").read_text()
    outcome = changes(repo).impl(
        "add-oauth", backends={"default": RewritingImplementer(repo).backend()}
    )
    assert outcome.status == "complete", outcome.message
    assert (repo / FOLDER / "specs/session.md").read_text() == spec
    assert (repo / FOLDER / "proposal.md").read_text() == proposal
    events = [
        json.loads(line) for line in (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    ]
    (violation,) = [e for e in events if e["event"] == "agent.violation"]
    assert "changes/add-oauth/specs/session.md" in violation["paths"], violation
    archived = changes(repo).archive("add-oauth")
    assert "specs/session.md" in archived.merged
    assert "REWRITTEN" not in (repo / "specs/session.md").read_text()


def test_the_plan_stays_the_authors_while_planning(repo: Path) -> None:
    """The same files are the proposal author's outputs during planning: not protected."""
    plan_approved(repo)
    assert "change_id: add-oauth" in (repo / FOLDER / "proposal.md").read_text()
    assert (repo / FOLDER / "specs/session.md").is_file()
