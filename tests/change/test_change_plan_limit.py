"""At the planning limit: ``plan --rechallenge`` challenges a plan edited by hand, and the
plan's view shows every plan file."""

from __future__ import annotations

from pathlib import Path

import pytest
from change_helpers import APPROVED, NEEDS_REVISION, ChangeAgents, changes

from phasegate.change import PlanOptions
from phasegate.errors import BadInputError

FOLDER = Path("changes/add-oauth")


def at_the_limit(repo: Path) -> ChangeAgents:
    agents = ChangeAgents(repo, challenges=[NEEDS_REVISION])
    outcome = changes(repo).plan(
        "add-oauth",
        "Add OAuth login",
        backends={"default": agents.backend()},
        options=PlanOptions(mode="quick"),
    )
    assert outcome.action == "waiting"
    state = changes(repo).state("add-oauth")
    assert state.plan is not None and state.plan.step == "decide"
    return agents


def test_rechallenge_at_the_planning_limit_challenges_the_edited_plan(repo: Path) -> None:
    """Docs: --rechallenge also works in proposed, to skip the reproposal after a manual
    edit. The challenger sees the edited plan; no reproposal runs."""
    at_the_limit(repo)
    proposal = repo / FOLDER / "proposal.md"
    proposal.write_text(proposal.read_text() + "\nEdited by hand: errors are handled.\n")
    agents = ChangeAgents(repo, challenges=[APPROVED])
    backend = agents.backend()
    outcome = changes(repo).plan(
        "add-oauth", backends={"default": backend}, options=PlanOptions(rechallenge=True)
    )
    assert agents.steps == [("challenger", "challenge")]
    (request,) = backend.requests
    assert "Edited by hand: errors are handled." in request.prompt_text()
    assert outcome.action == "challenged"
    assert changes(repo).state("add-oauth").phase.value == "challenged"


def test_rechallenge_and_on_limit_together_are_refused(repo: Path) -> None:
    at_the_limit(repo)
    agents = ChangeAgents(repo, challenges=[APPROVED])
    with pytest.raises(BadInputError, match="give one of them"):
        changes(repo).plan(
            "add-oauth",
            backends={"default": agents.backend()},
            options=PlanOptions(rechallenge=True, on_limit="continue"),
        )
    assert agents.steps == []


def test_view_at_the_planning_limit_shows_the_specs_too(repo: Path) -> None:
    """At a terminal, view shows the plan files: proposal.md, specs/*.md and tasks.md."""
    from test_change_plan import ScriptedPerson

    person = ScriptedPerson(["view", "continue"])
    shown: list[str] = []
    agents = ChangeAgents(repo, challenges=[NEEDS_REVISION, APPROVED])
    outcome = changes(repo).plan(
        "add-oauth",
        "Add OAuth login",
        backends={"default": agents.backend()},
        asker=person,
        options=PlanOptions(mode="quick", viewer=shown.append),
    )
    assert outcome.action == "challenged"
    for name in ("proposal.md", "specs/session.md", "specs/oauth-login.md", "tasks.md"):
        assert f"changes/add-oauth/{name}" in shown[0], name
