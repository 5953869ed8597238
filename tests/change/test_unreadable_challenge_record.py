"""The challenge record appended to proposal.md for a challenge whose answer could not be
read says so (not approved), and does not show the reader's schema error as an issue the
challenger named."""

from __future__ import annotations

from pathlib import Path

from change_helpers import APPROVED, ChangeAgents, changes

BAD = {
    "verdict": "APPROVED",
    "summary": "Ready.",
    "issues": [{"severity": "critical", "description": "x", "location": None}],
}


def _blocks(text: str) -> list[str]:
    return [b.split("<!-- /phasegate:challenge -->")[0] for b in text.split("## Challenge")[1:]]


def test_an_unreadable_challenge_is_recorded_as_not_read(repo: Path) -> None:
    agents = ChangeAgents(repo, challenges=[BAD, APPROVED])
    outcome = changes(repo).plan(
        "add-oauth", "Add OAuth login", backends={"default": agents.backend()}
    )
    assert outcome.action == "challenged", outcome.message
    proposal = (repo / "changes/add-oauth/proposal.md").read_text()
    first, second = _blocks(proposal)
    assert first.startswith(" review 1: could not be read (not approved)\n"), first
    assert "NEEDS_REVISION" not in first and "**high**" not in first, first
    assert first.count("does not match the verdict schema") == 1, first
    assert second.startswith(" review 2: APPROVED\n"), second
    history = changes(repo).state("add-oauth").history
    assert "challenge 1 could not be read" in [h.cause for h in history]
