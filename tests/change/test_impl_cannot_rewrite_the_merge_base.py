"""The merge bases under a change's `.base/specs/` are phasegate's own copy of the living
specs as the change found them: `archive` merges against them. An agent that rewrites
one could make `archive` drop what others added to the living spec meanwhile, so its
edit is put back (and journaled as a violation)."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import ChangeAgents, changes, git, plan_approved

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply

FOLDER = Path("changes/add-oauth")
LIVING = "# session\n\n## Requirements\n\n### SESSION-R1: Old\nAs it was.\n"
ADDED_MEANWHILE = "\n### SESSION-R9: Added by another change\nKeep me.\n"


class BaseRewritingImplementer(ChangeAgents):
    """An implementer whose first call also makes the merge base claim R9 was there."""

    def __call__(self, request: AgentRequest) -> ScriptedReply | None:
        if request.role == "implementer" and not any(r == "implementer" for r, _ in self.steps):
            self.steps.append(("implementer", "rewrite the base"))
            folder = request.labels["item_dir"]
            return ScriptedReply(
                write={
                    "app/x.py": "X = 1\n",
                    f"{folder}/.base/specs/session.md": LIVING + ADDED_MEANWHILE,
                },
                text="did it",
            )
        return super().__call__(request)


def test_a_merge_base_an_implementer_rewrites_is_put_back(repo: Path) -> None:
    (repo / "specs").mkdir()
    (repo / "specs/session.md").write_text(LIVING)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "living spec")
    plan_approved(repo)
    base = repo / FOLDER / ".base/specs/session.md"
    assert base.read_text() == LIVING
    # Another change adds a requirement to the living spec while this one is implemented.
    (repo / "specs/session.md").write_text(LIVING + ADDED_MEANWHILE)
    git(repo, "commit", "-qam", "another change")
    outcome = changes(repo).impl(
        "add-oauth", backends={"default": BaseRewritingImplementer(repo).backend()}
    )
    assert outcome.status == "complete", outcome.message
    assert base.read_text() == LIVING
    events = [
        json.loads(line) for line in (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    ]
    (violation,) = [e for e in events if e["event"] == "agent.violation"]
    assert "changes/add-oauth/.base/specs/session.md" in violation["paths"], violation
    changes(repo).archive("add-oauth")
    assert "SESSION-R9" in (repo / "specs/session.md").read_text()
