"""The change workflow's challenger (the ``words`` reader, UNCLEAR mapped to revise): a
challenge whose answer does not match the verdict schema is not approved, the reproposal
is not asked to mend it but keeps the issues of the last challenge that could be read, and
the challenger asked again is told its answer did not match the schema."""

from __future__ import annotations

from pathlib import Path

from change_helpers import APPROVED, NEEDS_REVISION, ChangeAgents, changes, step_of

SCHEMA_ERROR = "does not match the verdict schema"
NOT_READ = "The last review could not be read"
BAD = {
    "verdict": "APPROVED",
    "summary": "Ready.",
    "issues": [{"severity": "critical", "description": "x", "location": None}],
}


def test_an_unreadable_challenge_is_not_fed_back_as_an_issue(repo: Path) -> None:
    agents = ChangeAgents(repo, challenges=[NEEDS_REVISION, BAD, APPROVED])
    backend = agents.backend()
    changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": backend})
    reproposals = [r for r in backend.requests if step_of(r) == "reproposal"]
    assert len(reproposals) == 2
    (feedback,) = [p.body for p in reproposals[1].prompt if p.title == "Feedback to address"]
    assert SCHEMA_ERROR not in feedback
    assert NOT_READ in feedback and "[high] No error handling task (at tasks.md)" in feedback
    challenges = [r.prompt_text() for r in backend.requests if step_of(r) == "challenge"]
    assert len(challenges) == 3 and SCHEMA_ERROR in challenges[2]
    assert changes(repo).state("add-oauth").phase.value == "challenged"
