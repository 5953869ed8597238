"""The team workflow's Reviewer (the ``words`` reader, UNCLEAR mapped to revise): an answer
that does not match the verdict schema is never approved, the Coder is not asked to mend
it but keeps the issues of the last review that could be read, and the Reviewer asked again
is told its answer did not match the schema."""

from __future__ import annotations

from pathlib import Path

from team_helpers import calls_at, in_process, part, run_through, team_script, verdict, verdicts_of

SCHEMA_ERROR = "does not match the verdict schema"
NOT_READ = "The last review could not be read"
BAD_WORDS = {
    "verdict": {
        "verdict": "OK",
        "summary": "fine",
        "issues": [{"severity": "critical", "description": "x", "location": None}],
    }
}


def test_team_coder_is_not_asked_to_fix_an_unreadable_review(tmp_path: Path) -> None:
    script = team_script()
    script["reviewer"] = {
        "review:T1": [verdict("FAIL", "handle the lockout"), BAD_WORDS, verdict("OK")],
        "*": [verdict("OK")],
    }
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    run_through(repo, agents, UD_APPROVE_DESIGN="approved", UD_REVIEW_STRATEGY="per-batch")
    fixes = calls_at(agents, "tasks[T1]/review", "coder")
    assert len(fixes) == 2
    second = part(fixes[1], "Feedback to address")
    assert NOT_READ in second and "handle the lockout" in second
    assert SCHEMA_ERROR not in fixes[1].prompt_text()
    said = [(v["verdict"], v["approved"]) for v in verdicts_of(root, "tasks[T1]/review")]
    assert said[:3] == [("FAIL", False), ("UNCLEAR", False), ("OK", True)]
    reviews = calls_at(agents, "tasks[T1]/review", "reviewer")
    assert SCHEMA_ERROR in reviews[2].prompt_text()
