"""Agents are told up front what of acceptance.json and tasks.yaml is not theirs to change
(an honest agent does not waste a call on a change that is put back)."""

from __future__ import annotations

from pathlib import Path

from team_helpers import (
    calls_at,
    in_process,
    part,
    run_through,
    task_entries,
    tasks_yaml,
    team_script,
)

KEPT = "Not yours to change"
GATES = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}


def test_each_writing_role_is_told_what_it_may_not_change(tmp_path: Path) -> None:
    repo, agents = in_process(tmp_path / "repo", team_script())
    assert run_through(repo, agents, **GATES).status == "completed"
    (coder,) = calls_at(agents, "tasks[T1]/code", "coder")
    told = part(coder, KEPT)
    assert ".agents-work/login/acceptance.json" in told, told
    assert "acceptance_checks and done_when (the Planner's)" in told
    assert "completed" in told and "put back" in told
    (planner,) = calls_at(agents, "plan", "planner")
    told = part(planner, KEPT)
    assert ".agents-work/login/acceptance.json" in told and "tasks.yaml" not in told
    (integrator,) = calls_at(agents, "integrate", "integrator")
    assert "acceptance.json" in part(integrator, KEPT)
    # SpecAgent writes both; the read-only reviewers are told to edit nothing at all.
    (spec,) = calls_at(agents, "intake", "spec-agent")
    assert part(spec, KEPT) == ""
    for reviewer in [r for r in agents.requests if r.role in ("reviewer", "qa", "security")]:
        assert part(reviewer, KEPT) == ""


def test_a_lean_session_names_spec_agent_as_the_tasks_author(tmp_path: Path) -> None:
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
    coder = next(r for r in agents.requests if r.role == "coder")
    assert "acceptance_checks and done_when (SpecAgent's)" in part(coder, KEPT)
