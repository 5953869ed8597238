"""The ``team`` workflow's state machine is seed 003's, in both modes."""

from __future__ import annotations

from pathlib import Path

from team_helpers import in_process, run_through, task_entries, tasks_yaml, team_script

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
