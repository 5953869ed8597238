"""The ``team`` workflow end to end: scripted agents, gates answered with ``phasegate answer``.

Seed 003 as a whole: both mandatory gates answered without a terminal, a
changes-requested round, a Reviewer BLOCKED -> FIX_REVIEW -> OK, a Security
NEEDS_DECISION -> ASK_USER, an exhausted repair loop -> ASK_USER -> (b)
accept, per-batch and single-final, and a Definition of Done met -> DONE with
report.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    decision,
    dispatched,
    make_team_repo,
    status_json,
    team_script,
    verdict,
)


def _run_until_waiting(repo: Path) -> str:
    """``phasegate run``: it must stop for a person (exit 3) and say how to answer."""
    result = cli(repo, "run", ITEM)
    assert result.returncode == 3, result.stderr
    return result.stderr


def _answer(repo: Path, decision_id: str, answer: str) -> None:
    result = cli(repo, "answer", ITEM, decision_id, answer)
    assert result.returncode == 0, result.stderr


def test_full_mode_per_batch_end_to_end_through_phasegate_answer(tmp_path: Path) -> None:
    """Seed 003 State Machine (full mode): every state in order, gates answered by command.

    A change request goes to SpecAgent once and the gate is asked again; T1's Reviewer
    blocks once (FIX_REVIEW) then passes; Security asks for a decision (ASK_USER), which
    is accepted; the run ends DONE with report.md and every core agent dispatched.
    """
    script = team_script("per-batch")
    script["reviewer"] = {
        "review:T1": [verdict("BLOCKED", "no test of the limit"), verdict("OK")],
        "*": [verdict("OK")],
    }
    script["security"] = {"security:T1": [verdict("NEEDS_DECISION", "no lockout logging")]}
    repo = make_team_repo(tmp_path / "repo", script)
    created = cli(repo, "new", ITEM, "--workflow", "team", "--description", DESCRIPTION)
    assert created.returncode == 0, created.stderr

    out = _run_until_waiting(repo)
    assert f"phasegate answer {ITEM} UD-APPROVE-DESIGN approved" in out
    assert status_json(repo)["current_state"] == "APPROVE_DESIGN"
    _answer(repo, "UD-APPROVE-DESIGN", "changes-requested: the spec must give the number 5")

    _run_until_waiting(repo)  # the correction ran; the gate is asked again
    history = (repo / SESSION / "approve-design-history.jsonl").read_text().splitlines()
    assert [json.loads(h)["routed_to"] for h in history] == ["SpecAgent"]
    assert "5 attempts" not in (repo / SESSION / "spec.md").read_text()
    assert "Refuse more than 5" in (repo / SESSION / "spec.md").read_text()
    tracking = status_json(repo)["gate_tracking"]["APPROVE_DESIGN"]
    assert tracking["correction_status"] == "completed"
    _answer(repo, "UD-APPROVE-DESIGN", "approved")

    out = _run_until_waiting(repo)
    assert "UD-REVIEW-STRATEGY" in out and "2 task(s) planned" in out
    _answer(repo, "UD-REVIEW-STRATEGY", "per-batch")

    out = _run_until_waiting(repo)
    assert "UD-T1-SECURITY" in out
    assert status_json(repo)["current_state"] == "ASK_USER"
    assert decision(repo, "UD-T1-SECURITY")["state_context"] == "IMPLEMENT_LOOP"
    _answer(repo, "UD-T1-SECURITY", "accept")

    finished = cli(repo, "run", ITEM)
    assert finished.returncode == 0, finished.stderr
    status = status_json(repo)
    assert status["current_state"] == "DONE"
    assert status["review_strategy"] == "per-batch"
    assert [t["status"] for t in status["tasks"]] == ["completed", "completed"]
    assert status["retry_counts"]["T1"]["FIX_REVIEW"] == 1
    assert status["known_issues"] == ["T1: accepted at UD-T1-SECURITY: [medium] no lockout logging"]
    assert not [d for d in status["user_decisions"] if d["status"] == "pending"]
    assert decision(repo, "UD-APPROVE-DESIGN")["answer"] == "approved"
    assert decision(repo, "UD-REVIEW-STRATEGY")["answer"] == "per-batch"
    assert "## Known issues" in (repo / SESSION / "report.md").read_text()
    roles = [e["role"] for e in dispatched(repo)]
    for core in (
        "spec-agent",
        "architect",
        "planner",
        "coder",
        "reviewer",
        "qa",
        "security",
        "integrator",
        "docs",
    ):
        assert core in roles
    assert roles.count("spec-agent") == 2  # intake and the one correction
    nodes = [e["path"] for e in dispatched(repo)]
    assert (
        nodes.index("tasks[T1]/code") < nodes.index("tasks[T2]/code") < nodes.index("final-review")
    )
    assert "tasks[T2]/qa" not in nodes  # T2 only documents: QA does not apply


def test_full_mode_single_final_with_an_exhausted_repair_loop_accepted(tmp_path: Path) -> None:
    """Seed 003 single-final path and Retry budget: every task coded first, then ONE combined
    pass (task meta); QA blocks through 3 FIX_TESTS rounds, ASK_USER offers (a)-(d) and
    (b) accept goes on with the issue known; DONE once the Definition of Done holds."""
    script = team_script("single-final")
    script["qa"] = {"*": [verdict("BLOCKED", "the 6th attempt is not tested")]}
    repo = make_team_repo(tmp_path / "repo", script)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    _run_until_waiting(repo)
    _answer(repo, "UD-APPROVE-DESIGN", "approved")
    _run_until_waiting(repo)
    _answer(repo, "UD-REVIEW-STRATEGY", "single-final")

    out = _run_until_waiting(repo)
    assert "UD-META-FIX-TESTS" in out
    asked = decision(repo, "UD-META-FIX-TESTS")
    assert asked["choices"] == ["different-approach", "accept", "simplify", "guidance"]
    assert "3 repair round(s)" in asked["question"] and "not tested" in asked["question"]
    assert status_json(repo)["retry_counts"]["meta"]["FIX_TESTS"] == 3
    paths = [e["path"] for e in dispatched(repo)]
    coded = [paths.index("tasks-single[T1]/code"), paths.index("tasks-single[T2]/code")]
    assert max(coded) < paths.index("final-review")  # every task coded before any review
    assert not [p for p in paths if p.startswith("tasks-single") and not p.endswith("/code")]
    _answer(repo, "UD-META-FIX-TESTS", "accept")

    finished = cli(repo, "run", ITEM)
    assert finished.returncode == 0, finished.stderr
    status = status_json(repo)
    assert status["current_state"] == "DONE"
    assert [t["status"] for t in status["tasks"]] == ["completed", "completed"]
    assert status["known_issues"] == [
        "meta: accepted at UD-META-FIX-TESTS: [medium] the 6th attempt is not tested"
    ]
    reviews = [e for e in dispatched(repo) if e["role"] in ("reviewer", "security")]
    assert {e["path"] for e in reviews} == {"final-review", "final-security"}
