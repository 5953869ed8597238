"""A review whose answer cannot be read is never approved, and the executor is not asked to
mend the reviewer's answer: its next prompt says the last review could not be read, and
keeps the issues of the last review that could be read. The reviewer asked again is told
its answer did not match the schema. Run with the ``approval`` reader (feature) and the
``words`` reader (the review-loop example), whose integer locations are line numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine_helpers import calls
from review_loop_helpers import ITEM, make_repo, script, words
from test_example_workflow import engine, run_in_process
from test_review_loop import APPROVE, REJECT, run_phase, script_with

SCHEMA_ERROR = "does not match the verdict schema"
NOT_READ = "The last review could not be read"

#: An approval reader's answer whose issue has a severity the schema does not allow.
BAD_APPROVAL = {
    "verdict": {
        "approved": True,
        "issues": [{"severity": "critical", "description": "x", "location": None}],
        "summary": "fine",
    }
}
#: A words reader's answer whose issue has a severity the schema does not allow.
BAD_WORDS = {
    "verdict": {
        "verdict": "APPROVED",
        "summary": "fine",
        "issues": [{"severity": "critical", "description": "x", "location": None}],
    }
}


def feedback_part(prompt: str) -> str:
    assert "## Feedback to address" in prompt, prompt
    return prompt.split("## Feedback to address", 1)[1].split("\n## ", 1)[0]


def test_feature_executor_is_not_asked_to_fix_an_unreadable_review(git_repo: Path) -> None:
    backend, state = run_phase(
        git_repo,
        script_with("specify", "chain-reviewer", [REJECT, BAD_APPROVAL, APPROVE]),
        "specify",
        mode="full",
    )
    executor = [c.prompt_text() for c in calls(backend, "executor", "specify")]
    assert len(executor) == 3
    third = feedback_part(executor[2])
    assert SCHEMA_ERROR not in executor[2]
    assert NOT_READ in third and "not approved" in third
    # The last review that could be read still stands: its issue is fed back.
    assert "[blocker] No acceptance criteria (at ## Req)" in third
    records = [r for r in state["engine"]["iterations"] if r["phase"] == "specify"]
    assert [(r["approved"], r["unclear"]) for r in records] == [
        (False, False),
        (False, True),
        (True, False),
    ]
    assert SCHEMA_ERROR in records[1]["issues"][0]["description"]
    history = (git_repo / "docs/features/item/.review-history.md").read_text()
    assert "unclear (not approved)" in history and SCHEMA_ERROR in history
    # The reviewer asked again is told its answer did not match the schema.
    reviews = [c.prompt_text() for c in calls(backend, "chain-reviewer", "specify")]
    assert SCHEMA_ERROR in reviews[2]
    assert "No acceptance criteria" in reviews[2]


def test_a_first_unreadable_review_gives_the_executor_no_issue_to_fix(git_repo: Path) -> None:
    backend, _ = run_phase(
        git_repo,
        script_with("specify", "chain-reviewer", [BAD_APPROVAL, APPROVE]),
        "specify",
    )
    _, second = (c.prompt_text() for c in calls(backend, "executor", "specify"))
    said = feedback_part(second)
    assert SCHEMA_ERROR not in second
    assert NOT_READ in said
    assert "[blocker]" not in said


def test_unreadable_free_text_keeps_the_reviewers_words_for_the_executor(
    git_repo: Path,
) -> None:
    words_said = "Looks nice, but what about 429s"
    backend, _ = run_phase(
        git_repo,
        script_with("specify", "chain-reviewer", [{"text": words_said}, APPROVE]),
        "specify",
        text_only=True,
    )
    _, second = (c.prompt_text() for c in calls(backend, "executor", "specify"))
    said = feedback_part(second)
    assert NOT_READ in said
    assert words_said in said
    assert "could not be read as a verdict; treated as not approved" not in second


def test_words_reader_unreadable_review_keeps_the_earlier_issues(tmp_path: Path) -> None:
    agents = script([words("NEEDS_REVISION", "Name the limit"), BAD_WORDS, words("APPROVED")])
    repo = make_repo(tmp_path / "repo", agents)
    backend = run_in_process(repo, agents)
    planner = [r.prompt_text() for r in backend.requests if r.role == "planner"]
    assert len(planner) == 3
    assert SCHEMA_ERROR not in planner[2]
    third = feedback_part(planner[2])
    assert NOT_READ in third and "[high] Name the limit (at plan.md)" in third
    plan = engine(repo)["nodes"]["plan"]
    assert [(i["word"], i["approved"]) for i in plan["iterations"]] == [
        ("NEEDS_REVISION", False),
        ("UNCLEAR", False),
        ("APPROVED", True),
    ]
    critic = [r.prompt_text() for r in backend.requests if r.role == "critic"]
    assert SCHEMA_ERROR in critic[2]


def _words_with_location(location: Any) -> dict[str, Any]:
    issue = {"severity": "high", "description": "Name the limit", "location": location}
    return {"verdict": {"verdict": "NEEDS_REVISION", "summary": "vague", "issues": [issue]}}


def test_words_reader_reads_a_line_number_location_as_text(tmp_path: Path) -> None:
    agents = script([_words_with_location(42), words("APPROVED")])
    repo = make_repo(tmp_path / "repo", agents)
    backend = run_in_process(repo, agents)
    plan = engine(repo)["nodes"]["plan"]
    assert [i["word"] for i in plan["iterations"]] == ["NEEDS_REVISION", "APPROVED"]
    assert plan["iterations"][0]["issues"][0]["location"] == "42"
    planner = [r.prompt_text() for r in backend.requests if r.role == "planner"]
    assert "[high] Name the limit (at 42)" in planner[1]
    assert open_status(repo) == "done"


def test_words_reader_reads_a_line_number_location_in_a_text_answer(tmp_path: Path) -> None:
    answer = (
        '{"verdict": "NEEDS_REVISION", "summary": "vague", "issues": '
        '[{"severity": "high", "description": "Name the limit", "location": 7}]}'
    )
    agents = script([{"text": answer}, words("APPROVED")])
    repo = make_repo(tmp_path / "repo", agents)
    run_in_process(repo, agents)
    plan = engine(repo)["nodes"]["plan"]
    assert [i["word"] for i in plan["iterations"]] == ["NEEDS_REVISION", "APPROVED"]
    assert plan["iterations"][0]["issues"][0]["location"] == "7"


def open_status(repo: Path) -> str:
    from phasegate.api import open_repo

    return str(open_repo(repo).status(ITEM)["label"])
