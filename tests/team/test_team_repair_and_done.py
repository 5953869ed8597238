"""Repair loops, INTEGRATE, RELEASE and the Definition of Done (seed 003)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from team_helpers import (
    LIMIT_BROKEN,
    LIMIT_OK,
    SESSION,
    in_process,
    part,
    run_through,
    status_json,
    team_script,
    verdict,
    verdicts_of,
)

from phasegate.errors import BadInputError, WaitingForHuman

GATES = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}


def _blocked_reviews(script: dict[str, Any]) -> None:
    script["reviewer"] = {
        "review:T1": [verdict("BLOCKED", "no lockout test")],
        "*": [verdict("OK")],
    }


def test_repair_loop_stops_after_three_rounds_and_asks_with_the_options(tmp_path: Path) -> None:
    """Retry budget: at most 3 FIX_REVIEW iterations per task (counted in retry_counts);
    then ASK_USER with what was tried, why it failed and options (a)-(d)."""
    script = team_script()
    _blocked_reviews(script)
    script["coder"]["review:T1"] = [{"text": f"fix attempt {n}"} for n in range(5)]
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    with pytest.raises(WaitingForHuman, match="UD-T1-FIX-REVIEW"):
        run_through(repo, agents, **GATES)
    fixes = [
        r for r in agents.requests if r.role == "coder" and r.labels["path"] == "tasks[T1]/review"
    ]
    assert len(fixes) == 3
    assert len(verdicts_of(root, "tasks[T1]/review")) == 4
    status = status_json(root)
    assert status["retry_counts"]["T1"]["FIX_REVIEW"] == 3
    assert status["current_state"] == "ASK_USER"
    (pending,) = repo.decisions("login")
    assert "3 repair round(s)" in pending["question"] and "fix attempt" in pending["question"]
    assert "no lockout test" in pending["question"]
    descriptions = " ".join(pending["choices"].values())
    for option in (
        "(a) try a different approach",
        "(b) accept",
        "(c) simplify",
        "(d) your guidance",
    ):
        assert option in descriptions


def test_each_option_of_an_exhausted_loop_leads_somewhere_defined(tmp_path: Path) -> None:
    """Retry budget options: (a) 3 more rounds with the Coder told so; (c) and (d) need a
    note, which reaches the Coder; (b) goes on with the issue recorded as known."""
    script = team_script()
    _blocked_reviews(script)
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    with pytest.raises(WaitingForHuman):
        run_through(repo, agents, **GATES)
    with pytest.raises(BadInputError, match="needs a note"):
        repo.answer("login", "UD-T1-FIX-REVIEW", "guidance")
    repo.answer("login", "UD-T1-FIX-REVIEW", "different-approach")
    with pytest.raises(WaitingForHuman, match="UD-T1-FIX-REVIEW"):
        run_through(repo, agents)
    fixes = [
        r for r in agents.requests if r.role == "coder" and r.labels["path"] == "tasks[T1]/review"
    ]
    assert len(fixes) == 6
    assert "UD-T1-FIX-REVIEW: different-approach" in part(fixes[3], "A person decided")
    assert status_json(root)["retry_counts"]["T1"]["FIX_REVIEW"] == 6
    repo.answer("login", "UD-T1-FIX-REVIEW", "simplify: drop the lockout")
    with pytest.raises(WaitingForHuman):
        run_through(repo, agents)
    fixes = [
        r for r in agents.requests if r.role == "coder" and r.labels["path"] == "tasks[T1]/review"
    ]
    assert "drop the lockout" in part(fixes[6], "Feedback to address")
    assert "UD-T1-FIX-REVIEW: simplify" in part(fixes[6], "A person decided")
    repo.answer("login", "UD-T1-FIX-REVIEW", "accept")
    assert run_through(repo, agents).status == "completed"
    status = status_json(root)
    assert status["known_issues"] == ["T1: accepted at UD-T1-FIX-REVIEW: [medium] no lockout test"]
    assert [
        d["answer"] for d in status["user_decisions"] if d["decision_id"] == "UD-T1-FIX-REVIEW"
    ] == [
        "different-approach",
        "simplify: drop the lockout",
        "accept",
    ]


def test_failing_acceptance_checks_go_to_fix_build(tmp_path: Path) -> None:
    """INTEGRATE: the acceptance_checks commands run as a check; red -> FIX_BUILD (the Coder,
    the failing output as feedback), counted in retry_counts; green goes on to RELEASE."""
    script = team_script()
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    script["coder"]["fix-build"] = [{"write": {"src/limit.py": LIMIT_OK}, "text": "fixed ok()"}]
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    assert run_through(repo, agents, **GATES).status == "completed"
    paths = [r.labels["path"] for r in agents.requests]
    assert paths.index("integrate") < paths.index("fix-build") < paths.index("docs")
    fix = next(r for r in agents.requests if r.labels["path"] == "fix-build")
    assert "check 'T1:1'" in part(fix, "Feedback to address")
    state = repo.state("login")
    checks = {c["name"]: c["passed"] for c in state.peek("acceptance").get("checks")}
    assert checks == {"T1:1": False, "T2:1": True, "AC-1": False, "AC-2": True}
    status = status_json(root)
    assert status["retry_counts"]["meta"]["FIX_BUILD"] == 1
    assert status["last_ci_result"] == "green"


def test_fix_build_exhausted_asks_the_user(tmp_path: Path) -> None:
    """Repair loops: FIX_BUILD too stops after 3 rounds and asks the person."""
    script = team_script()
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    with pytest.raises(WaitingForHuman, match="UD-META-FIX-BUILD"):
        run_through(repo, agents, **GATES)
    assert len([r for r in agents.requests if r.labels["path"] == "fix-build"]) == 3
    status = status_json(root)
    assert status["retry_counts"]["meta"]["FIX_BUILD"] == 3
    assert status["last_ci_result"] == "red"
    asked = next(d for d in status["user_decisions"] if d["decision_id"] == "UD-META-FIX-BUILD")
    assert asked["state_context"] == "INTEGRATE"


def test_definition_of_done_met_reaches_done_with_report(tmp_path: Path) -> None:
    """Definition of Done: every criterion's check recorded as passed, status.json DONE with
    no pending decision, report.md with its four sections; journaled as met."""
    root = tmp_path / "repo"
    repo, agents = in_process(root, team_script())
    assert run_through(repo, agents, **GATES).status == "completed"
    state = repo.state("login")
    assert {c["name"] for c in state.peek("dod").get("checks")} == {"AC-1", "AC-2"}
    from team_helpers import journal

    (checked,) = [e for e in journal(root) if e["event"] == "definition_of_done"]
    assert (checked["met"], checked["missing"]) == (True, [])
    assert status_json(root)["current_state"] == "DONE"
    report = (root / SESSION / "report.md").read_text()
    for section in ("What was done", "How to run", "How to test", "Known issues"):
        assert f"## {section}" in report


def test_unmet_definition_of_done_names_what_is_missing_and_does_not_reach_done(
    tmp_path: Path,
) -> None:
    """Definition of Done: a criterion whose check fails at the end keeps the session out of
    DONE; the person is told exactly what is missing, can fix it and check again."""
    script = team_script()
    script["docs"]["docs"][0]["write"]["docs/limit.md"] = ""  # Docs empties the doc AC-2 needs
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    with pytest.raises(WaitingForHuman, match="UD-DOD"):
        run_through(repo, agents, **GATES)
    (pending,) = repo.decisions("login")
    assert (
        "acceptance criterion AC-2 is not met (`test -s docs/limit.md` failed)"
        in (pending["question"])
    )
    status = status_json(root)
    assert status["current_state"] == "ASK_USER" and repo.state("login").status == "active"
    (root / "docs" / "limit.md").write_text("# Limit\n\n5 a minute.\n")
    repo.answer("login", "UD-DOD", "recheck")
    assert run_through(repo, agents).status == "completed"
    assert status_json(root)["current_state"] == "DONE"


def test_report_without_the_four_sections_goes_back_to_docs(tmp_path: Path) -> None:
    """RELEASE gate: report.md must say what was done, how to run, how to test and the known
    issues; Docs gets back what is missing."""
    script = team_script()
    good = script["docs"]["docs"][0]
    script["docs"]["docs"] = [
        {"write": {"{item_dir}/report.md": "# Report\n\n## What was done\n\nIt.\n"}},
        good,
    ]
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    assert run_through(repo, agents, **GATES).status == "completed"
    (first,) = verdicts_of(root, "docs")
    problems = " ".join(i["description"] for i in first["issues"])
    assert "no section 'How to run'" in problems and "no section 'Known issues'" in problems
