"""A team repair loop whose last review could not be read, extended by a person with no
note: the Coder is not asked to mend the Reviewer's answer, and keeps the issues of the
last review that could be read."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_helpers import calls_at, in_process, part, run_through, team_script, verdict

from phasegate.errors import WaitingForHuman

BAD = {
    "verdict": {
        "verdict": "OK",
        "summary": "fine",
        "issues": [{"severity": "critical", "description": "x", "location": None}],
    }
}


def test_an_extended_loop_after_an_unreadable_review(tmp_path: Path) -> None:
    script = team_script()
    script["reviewer"] = {
        "review:T1": [verdict("FAIL", "handle the lockout")] * 3 + [BAD, verdict("OK")],
        "*": [verdict("OK")],
    }
    repo, agents = in_process(tmp_path / "repo", script)
    with pytest.raises(WaitingForHuman):
        run_through(repo, agents, UD_APPROVE_DESIGN="approved", UD_REVIEW_STRATEGY="per-batch")
    run_through(repo, agents, UD_T1_FIX_REVIEW="different-approach")
    feedback = part(calls_at(agents, "tasks[T1]/review", "coder")[-1], "Feedback to address")
    assert "does not match the verdict schema" not in feedback
    assert "The last review could not be read" in feedback
    assert "handle the lockout" in feedback
