"""proposal.md's frontmatter lists the specs to write; frontmatter that is not valid YAML
is an invalid proposal (the author is asked again, then the plan stops naming the line and
column), never read as "no specs", which would plan the change without any."""

from __future__ import annotations

from pathlib import Path

import pytest
from change_helpers import ChangeAgents, changes

from phasegate.errors import AgentError


def test_unreadable_proposal_frontmatter_stops_the_plan_with_line_and_column(
    repo: Path,
) -> None:
    agents = ChangeAgents(repo, specs=["session", "oauth: [login"])
    with pytest.raises(AgentError) as caught:
        changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": agents.backend()})
    message = str(caught.value)
    assert (
        "changes/add-oauth/proposal.md: invalid YAML frontmatter on line 5, column 16: "
        "mapping values are not allowed here"
    ) in message, message
    assert changes(repo).state("add-oauth").phase.value == "proposed"
    assert not (repo / "changes" / "add-oauth" / "specs").exists()


def test_a_proposal_listing_no_specs_still_plans(repo: Path) -> None:
    """Valid frontmatter with an empty specs list is not a problem of the proposal."""
    agents = ChangeAgents(repo, specs=[])
    outcome = changes(repo).plan(
        "add-oauth", "Add OAuth login", backends={"default": agents.backend()}
    )
    assert outcome.action == "challenged", outcome.message
