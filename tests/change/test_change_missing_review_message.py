"""A reviewer that never calls create_review: one sentence, in order, naming the
command to run again (seed 002 WF-R4: no recorded review, no approval)."""

from __future__ import annotations

from pathlib import Path

import pytest
from change_helpers import ChangeAgents, changes, plan_approved

from phasegate.errors import AgentError, ExitCode


def test_the_missing_review_error_says_what_happened_then_what_to_run(repo: Path) -> None:
    plan_approved(repo)
    agents = ChangeAgents(repo, reviews=[None])
    with pytest.raises(AgentError) as caught:
        changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    message = str(caught.value)
    assert caught.value.exit_code is ExitCode.AGENT
    assert "\n" not in message
    assert message.startswith(
        "the reviewer (scripted) of add-oauth answered 2 times without calling the "
        "create_review tool, so no review was recorded and the change is not approved; "
    ), message
    assert message.endswith("then run phasegate impl add-oauth"), message
    assert "MCP server" in message
    assert message.count("so ") == 1 and "run phasegate again" not in message
    assert changes(repo).state("add-oauth").phase.value == "implementing"
