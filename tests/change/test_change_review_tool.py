"""The ``create_review`` tool (WF-R4 step 2): validated arguments; REVIEW.md of the right change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from change_helpers import FINDING, review
from test_change_state_machine import write_state

from phasegate.change import ChangeTools, ToolCallError, read_review

REVIEW_MD = Path("changes/add-oauth/REVIEW.md")
AWAITING = {"epoch": 4, "impl": {"step": "review", "iteration": 2}}


def awaiting_review(repo: Path) -> ChangeTools:
    """A change whose reviewer is at work (as STATE.yaml says during the review call)."""
    write_state(repo, "implementing", **AWAITING)
    (repo / "changes/add-oauth/tasks.md").write_text("## 1. Data Layer\n- [ ] 1.1 model\n")
    return ChangeTools(repo, change_id="add-oauth")


def call(tools: ChangeTools, **arguments: Any) -> dict[str, Any]:
    return tools.call("create_review", {"change_id": "add-oauth", **arguments})


def test_create_review_writes_a_structured_review_md(repo: Path) -> None:
    """WF-R4: create_review generates a structured REVIEW.md (verdict, findings, tests run)."""
    tools = awaiting_review(repo)
    answer = call(tools, **review("NEEDS_FIX", FINDING))
    assert answer == {
        "written": "changes/add-oauth/REVIEW.md",
        "change_id": "add-oauth",
        "round": "4.2",
        "verdict": "NEEDS_FIX",
        "findings": 1,
    }
    recorded = read_review(repo / REVIEW_MD)
    assert recorded is not None
    assert (recorded.round, recorded.iteration, recorded.verdict.value) == ("4.2", 2, "NEEDS_FIX")
    (finding,) = recorded.findings
    assert (finding.severity.value, finding.file, finding.line) == ("high", "app/oauth.py", 3)
    text = (repo / REVIEW_MD).read_text()
    assert "| 1 | high | `app/oauth.py:3` | The callback ignores the state parameter |" in text
    assert "- `python -m pytest -q`: FAILED" in text


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("verdict", {"verdict": "LGTM"}, "create_review: verdict: Input should be 'APPROVED'"),
    (
        "no line",
        {"findings": [{k: v for k, v in FINDING.items() if k != "line"}]},
        "findings.0.line: required field is missing",
    ),
    (
        "line 0",
        {"findings": [{**FINDING, "line": 0}]},
        "findings.0.line: Input should be greater than or equal to 1",
    ),
    (
        "line text",
        {"findings": [{**FINDING, "line": "3"}]},
        "findings.0.line: Input should be a valid integer",
    ),
    (
        "severity",
        {"findings": [{**FINDING, "severity": "blocker"}]},
        "findings.0.severity: Input should be 'high'",
    ),
    (
        "escape",
        {"findings": [{**FINDING, "file": "../other/x.py"}]},
        "must be a path relative to the repository",
    ),
    (
        "outside",
        {"findings": [{**FINDING, "file": "/etc/passwd"}]},
        "must be a path relative to the repository",
    ),
    (
        "approved+high",
        {"verdict": "APPROVED", "findings": [FINDING]},
        "APPROVED review cannot list high-severity",
    ),
    ("no findings", {"verdict": "MAJOR_ISSUES", "findings": []}, "must list at least one finding"),
    ("extra", {"score": 9}, "create_review: score: unknown field"),
    ("no change_id", {"change_id": ""}, "create_review: change_id: required field is missing"),
    (
        "change_id number",
        {"change_id": 7},
        "create_review: change_id: must be a string, not int (7)",
    ),
    (
        "tests",
        {"tests_run": [{"command": "pytest", "passed": "yes"}]},
        "tests_run.0.passed: Input should be a valid boolean",
    ),
]


@pytest.mark.parametrize(("case", "change", "message"), BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_a_bad_call_is_a_clear_tool_error_and_writes_nothing(
    repo: Path, case: str, change: dict[str, Any], message: str
) -> None:
    """create_review: arguments are validated; a bad call is a clear tool error, writes nothing."""
    tools = awaiting_review(repo)
    state_before = (repo / "changes/add-oauth/STATE.yaml").read_bytes()
    with pytest.raises(ToolCallError) as caught:
        call(tools, **{**review("NEEDS_FIX", FINDING), **change})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not (repo / REVIEW_MD).exists()
    assert (repo / "changes/add-oauth/STATE.yaml").read_bytes() == state_before


def test_a_review_for_another_change_is_refused(repo: Path) -> None:
    """The server serves one change: a call naming another writes nothing anywhere."""
    tools = awaiting_review(repo)
    write_state(repo, "implementing", change="other", **AWAITING)
    with pytest.raises(ToolCallError, match="'other' is not the change this server serves"):
        tools.call("create_review", {"change_id": "other", **review("APPROVED")})
    assert not (repo / "changes/other/REVIEW.md").exists()


def test_a_change_not_awaiting_a_review_is_refused(repo: Path) -> None:
    """create_review writes only while the change is implementing and at its review step."""
    write_state(repo, "challenged")
    tools = ChangeTools(repo, change_id="add-oauth")
    with pytest.raises(ToolCallError, match="not awaiting a review \\(phase challenged\\)"):
        call(tools, **review("APPROVED"))
    assert not (repo / REVIEW_MD).exists()


def test_an_unknown_change_is_refused(repo: Path) -> None:
    """Without --change the tool checks the named change exists."""
    with pytest.raises(ToolCallError, match="change 'nope': no such change"):
        ChangeTools(repo).call("create_review", {"change_id": "nope", **review("APPROVED")})


def test_absolute_paths_inside_the_repository_are_made_relative(repo: Path) -> None:
    """Agents often name files absolutely; inside the repository that is fine."""
    tools = awaiting_review(repo)
    call(tools, **review("NEEDS_FIX", {**FINDING, "file": str(repo / "app" / "oauth.py")}))
    recorded = read_review(repo / REVIEW_MD)
    assert recorded is not None and recorded.findings[0].file == "app/oauth.py"


def test_a_tool_outside_the_allow_list_is_refused(repo: Path) -> None:
    """Least privilege: a server started with --tools offers and runs only those."""
    awaiting_review(repo)
    tools = ChangeTools(repo, change_id="add-oauth", allowed=["get_change", "get_tasks"])
    assert [spec.name for spec in tools.specs()] == ["get_change", "get_tasks"]
    with pytest.raises(ToolCallError, match="tool 'create_review' is not allowed here"):
        call(tools, **review("APPROVED"))
    assert not (repo / REVIEW_MD).exists()


def test_secrets_in_a_review_never_reach_the_disk(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Project rule: nothing secret is written; REVIEW.md is redacted."""
    monkeypatch.setenv("SERVICE_API_KEY", "abcd-1234-secret-value")
    tools = awaiting_review(repo)
    leaky = {**review("APPROVED"), "summary": "Checked with key abcd-1234-secret-value."}
    call(tools, **leaky)
    text = (repo / REVIEW_MD).read_text()
    assert "abcd-1234-secret-value" not in text and "[REDACTED]" in text


def test_get_tasks_reports_layers_and_where_the_change_id_came_from(repo: Path) -> None:
    """The read tool an agent needs: tasks by layer (WF-R5 inference included), and the rule."""
    tools = awaiting_review(repo)
    answer = tools.call("get_tasks", {"change_id": "add-oauth"})
    assert answer == {
        "change_id": "add-oauth",
        "change_id_from": "directory",
        "order": "layers",
        "layers": [
            {
                "layer": "data",
                "title": "Data Layer",
                "tasks": [
                    {"text": "1.1 model", "done": False, "line": 2, "id": "1.1", "parallel": False}
                ],
            }
        ],
    }


def test_get_change_reports_the_phase_and_next_command(repo: Path) -> None:
    """The read tool an agent needs: the change's state."""
    answer = awaiting_review(repo).call("get_change", {"change_id": "add-oauth"})
    assert (answer["phase"], answer["impl_step"], answer["impl_iteration"]) == (
        "implementing",
        "review",
        2,
    )
    assert answer["next"] == "phasegate impl add-oauth"


@pytest.mark.parametrize(
    ("severity", "flags"),
    [
        ("low", "--on-limit implement or --on-limit continue"),
        ("high", "--on-limit continue"),
    ],
)
def test_get_change_at_the_planning_limit_names_the_answer(
    repo: Path, severity: str, flags: str
) -> None:
    """At the planning limit a bare `plan ID` only asks again (exit 3): the next command is
    the one that answers the question (implement only when the issues left are minor)."""
    write_state(
        repo,
        "proposed",
        plan={
            "step": "decide",
            "verdict": "NEEDS_REVISION",
            "issues": [{"severity": severity, "description": "typo"}],
            "question": "Implement it as it is, or continue revising?",
        },
    )
    answer = ChangeTools(repo).call("get_change", {"change_id": "add-oauth"})
    assert answer["next"] == f"phasegate plan add-oauth {flags}"
