"""The ``team`` workflow's state machine is seed 003's, in both modes."""

from __future__ import annotations

import json
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    cli,
    in_process,
    make_team_repo,
    run_through,
    task_entries,
    tasks_yaml,
    team_script,
)

from phasegate.workflow.registry import WorkflowRegistry

FULL = [
    "INTAKE",
    "DESIGN",
    "APPROVE_DESIGN",
    "PLAN",
    "REVIEW_STRATEGY",
    "IMPLEMENT_LOOP",
    "INTEGRATE",
    "RELEASE",
    "DONE",
]
LEAN = ["INTAKE_LEAN", "IMPLEMENT_LOOP", "INTEGRATE", "DONE"]


def _states(history: list[dict[str, str]]) -> list[str]:
    found = [history[0]["from"]] if history else []
    for change in history:
        if change["to"] not in found[-1:]:
            found.append(change["to"])
    return found


def test_full_mode_walks_the_seed_states_in_order(tmp_path: Path) -> None:
    """State Machine: INTAKE -> DESIGN -> APPROVE_DESIGN -> PLAN -> REVIEW_STRATEGY ->
    IMPLEMENT_LOOP -> INTEGRATE -> RELEASE -> DONE."""
    repo, agents = in_process(tmp_path / "repo", team_script())
    answers = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}
    assert run_through(repo, agents, **answers).status == "completed"
    assert _states(repo.state("login").get("history")) == FULL


def test_lean_mode_walks_the_seed_states_in_order(tmp_path: Path) -> None:
    """Lean mode: INTAKE_LEAN -> IMPLEMENT_LOOP -> INTEGRATE -> DONE, with no gate asked."""
    script = team_script()
    one = task_entries()[:1]
    script["spec-agent"]["intake-lean"] = [
        {
            "write": {
                **script["spec-agent"]["intake"][0]["write"],
                "{item_dir}/tasks.yaml": tasks_yaml(one),
            }
        }
    ]
    script["coder"]["code:T1"][0]["write"]["{item_dir}/tasks.yaml"] = tasks_yaml(
        one, T1="implemented"
    )
    script["coder"]["code:T1"][0]["write"]["docs/limit.md"] = "# Limit\n"
    repo, agents = in_process(tmp_path / "repo", script, mode="lean")
    assert run_through(repo, agents).status == "completed"
    state = repo.state("login")
    assert _states(state.get("history")) == LEAN
    assert state.decisions == {}
    roles = {r.role for r in agents.requests}
    assert roles == {"spec-agent", "coder", "reviewer", "qa", "security"}


def test_reviewers_are_read_only_and_writers_write() -> None:
    """Roles: Reviewer, QA and Security review read-only; the other agents write."""
    roles = WorkflowRegistry().get("team").workflow.roles
    assert {n for n, r in roles.items() if r.access == "read-only"} == {
        "reviewer",
        "qa",
        "security",
    }
    assert len(roles) == 11


def test_status_lists_the_other_modes_steps_as_skipped(tmp_path: Path) -> None:
    """State Machine: lean mode has no DESIGN, gates, PLAN or RELEASE, and full mode no
    INTAKE_LEAN: `phasegate status` shows those steps as skipped, never as still to come."""
    repo = make_team_repo(tmp_path / "repo", team_script())
    for name, mode in (("full-one", "full"), ("lean-one", "lean")):
        created = cli(repo, "new", name, "-w", "team", "-m", mode, "-d", DESCRIPTION)
        assert created.returncode == 0, created.stderr
    shown = cli(repo, "status", "full-one", "--json")
    full = {p["node"]: p["status"] for p in json.loads(shown.stdout)["phases"]}
    shown = cli(repo, "status", "lean-one", "--json")
    lean = {p["node"]: p["status"] for p in json.loads(shown.stdout)["phases"]}
    assert {n for n, s in full.items() if s == "skipped"} == {
        "intake-lean",
        "intake-lean-check",
        "lean-report",
    }
    for node in ("intake", "approve-design", "plan", "review-strategy", "integrate", "docs"):
        assert lean[node] == "skipped"
    for node in ("intake-lean", "tasks", "acceptance", "lean-report", "dod"):
        assert lean[node] == "pending"
    assert full["intake"] == "pending"
