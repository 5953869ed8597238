"""Session layout, status.json, and the gates of INTAKE, DESIGN and PLAN checked in code."""

from __future__ import annotations

import json
from pathlib import Path

from team_helpers import (
    ACCEPTANCE,
    DESCRIPTION,
    ITEM,
    SESSION,
    SPEC,
    cli,
    dispatched,
    journal,
    make_team_repo,
    status_json,
    task_entries,
    tasks_yaml,
    team_script,
)

from phasegate.team.status_file import TeamStatus


def _new(repo: Path, description: str = DESCRIPTION, mode: str = "full") -> None:
    result = cli(repo, "new", ITEM, "-w", "team", "-m", mode, "-d", description)
    assert result.returncode == 0, result.stderr


def test_session_lives_in_agents_work_named_after_the_item(tmp_path: Path) -> None:
    """CONTRACT session layout (seed 003): every artifact is in .agents-work/<session>/,
    the session being the work item's name; status.json exists from the session's start."""
    repo = make_team_repo(tmp_path / "repo")
    _new(repo)
    assert (repo / SESSION / "status.json").is_file()
    assert cli(repo, "run", ITEM).returncode == 3
    for name in ("spec.md", "acceptance.json", "architecture.md", "status.json"):
        assert (repo / SESSION / name).is_file(), name
    assert sorted(p.name for p in (repo / ".agents-work").iterdir()) == [ITEM]


def test_status_json_has_the_seed_fields_and_fits_its_schema(tmp_path: Path) -> None:
    """status.json minimal schema: current_state, user_decisions, gate_tracking, runtime_flags
    (with copilot_checked_at), retry_counts and the tasks' statuses; validated by its model."""
    repo = make_team_repo(tmp_path / "repo")
    _new(repo)
    status = status_json(repo)
    TeamStatus.model_validate(status)
    assert status["current_state"] == "INTAKE"
    assert status["session"] == ITEM and status["mode"] == "full"
    assert status["gate_tracking"]["APPROVE_DESIGN"]["correction_status"] == "none"
    flags = status["runtime_flags"]
    assert flags["copilot_instructions_exists"] is False and flags["copilot_checked_at"]
    assert (status["user_decisions"], status["retry_counts"], status["tasks"]) == ([], {}, [])


def test_corrupt_status_json_is_a_clear_error_and_never_overwritten(tmp_path: Path) -> None:
    """status.json's schema is checked on every read: a file that does not fit stops run and
    status with exit 5 naming the file and the field, and the file is left as it was."""
    repo = make_team_repo(tmp_path / "repo")
    _new(repo)
    path = repo / SESSION / "status.json"
    document = json.loads(path.read_text())
    document["current_state"] = "SOMEWHERE"
    path.write_text(json.dumps(document))
    before = path.read_bytes()
    for args in (("run", ITEM), ("status", ITEM)):
        result = cli(repo, *args)
        assert result.returncode == 5, result.stderr
        assert str(path) in result.stderr and "current_state" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before
    path.write_text("{not json")
    assert cli(repo, "run", ITEM).returncode == 5
    assert path.read_text() == "{not json"
    assert not dispatched(repo)


def test_intake_without_testable_acceptance_criteria_goes_back_to_spec_agent(
    tmp_path: Path,
) -> None:
    """INTAKE gate: spec.md must state testable ACs and acceptance.json give each a check
    command; what is missing goes back to SpecAgent as blockers; valid files pass."""
    script = team_script()
    vague = {"criteria": [{"id": "AC-1", "description": "works"}]}
    script["spec-agent"]["intake"] = [
        {
            "write": {
                "{item_dir}/spec.md": "# Spec\n\nMake login safer.\n",
                "{item_dir}/acceptance.json": json.dumps(vague),
            }
        },
        {
            "write": {
                "{item_dir}/spec.md": SPEC,
                "{item_dir}/acceptance.json": json.dumps(ACCEPTANCE),
            }
        },
    ]
    repo = make_team_repo(tmp_path / "repo", script)
    _new(repo)
    assert cli(repo, "run", ITEM).returncode == 3
    verdicts = [
        e for e in journal(repo) if e["event"] == "review.verdict" and e["node"] == "intake"
    ]
    problems = " ".join(i["description"] for i in verdicts[0]["issues"])
    assert "lists no acceptance criteria" in problems
    assert "criterion AC-1 has no check" in problems
    assert [v["approved"] for v in verdicts] == [False]
    intake_calls = [e for e in dispatched(repo) if e["path"] == "intake"]
    assert len(intake_calls) == 2
    assert status_json(repo)["current_state"] == "APPROVE_DESIGN"


def test_intake_that_never_meets_its_gate_blocks(tmp_path: Path) -> None:
    """INTAKE gate: a session whose spec never has testable ACs does not go on: after its
    rounds it is BLOCKED (exit 4), status.json saying why."""
    script = team_script()
    script["spec-agent"]["intake"] = [{"write": {"{item_dir}/spec.md": "# Spec\n"}}]
    repo = make_team_repo(tmp_path / "repo", script)
    _new(repo)
    result = cli(repo, "run", ITEM)
    assert result.returncode == 4, result.stderr
    assert "acceptance.json is missing or empty" in result.stderr
    status = status_json(repo)
    assert (status["current_state"], status["blocker"]["reason"]) == ("BLOCKED", "gate_failed")
    assert not [e for e in dispatched(repo) if e["role"] == "architect"]


def test_acceptance_ids_must_match_the_spec(tmp_path: Path) -> None:
    """INTAKE gate: acceptance.json holds exactly the criteria spec.md states."""
    script = team_script()
    extra = {
        "criteria": [*ACCEPTANCE["criteria"], {"id": "AC-3", "description": "x", "check": "true"}]
    }
    script["spec-agent"]["intake"] = [
        {"write": {"{item_dir}/spec.md": SPEC, "{item_dir}/acceptance.json": json.dumps(extra)}},
        {"write": {"{item_dir}/acceptance.json": json.dumps(ACCEPTANCE)}},
    ]
    repo = make_team_repo(tmp_path / "repo", script)
    _new(repo)
    assert cli(repo, "run", ITEM).returncode == 3
    verdicts = [
        e for e in journal(repo) if e["event"] == "review.verdict" and e["node"] == "intake"
    ]
    assert "AC-3 is here but not in spec.md" in verdicts[0]["issues"][0]["description"]


def test_researcher_runs_only_when_research_is_needed(tmp_path: Path) -> None:
    """DESIGN: the Researcher runs when the request asks for evaluation or research, and the
    DESIGN gate needs its report; otherwise it is skipped."""
    script = team_script()
    script["researcher"] = {"research": [{"write": {"{item_dir}/research/report.md": "# R\n"}}]}
    plain = make_team_repo(tmp_path / "plain", script)
    _new(plain)
    assert cli(plain, "run", ITEM).returncode == 3
    assert "researcher" not in [e["role"] for e in dispatched(plain)]
    studied = make_team_repo(tmp_path / "studied", script)
    _new(studied, "Evaluate which library should rate limit logins")
    assert cli(studied, "run", ITEM).returncode == 3
    roles = [e["role"] for e in dispatched(studied)]
    assert roles.index("researcher") < roles.index("architect")
    assert (studied / SESSION / "research" / "report.md").is_file()


def test_designer_runs_when_a_user_interface_is_involved(tmp_path: Path) -> None:
    """DESIGN: the Designer runs after the Architect when the task involves UI/UX; a missing
    design spec is a blocker of the DESIGN gate."""
    script = team_script()
    script["designer"] = {
        "design-specs": [
            {"text": "forgot"},
            {"write": {"{item_dir}/design-specs/form.md": "# Form\n"}},
        ]
    }
    repo = make_team_repo(tmp_path / "repo", script)
    _new(repo, "Show the rate limit on the login form")
    assert cli(repo, "run", ITEM).returncode == 3
    roles = [e["role"] for e in dispatched(repo)]
    assert roles[-2:] == ["designer", "designer"] and roles.index("architect") < roles.index(
        "designer"
    )


def test_architecture_without_risks_is_sent_back(tmp_path: Path) -> None:
    """DESIGN gate: "risks recorded": architecture.md without a Risks section goes back."""
    script = team_script()
    script["architect"]["architecture"] = [
        {"write": {"{item_dir}/architecture.md": "# Architecture\n\nOne module.\n"}},
        {"write": {"{item_dir}/architecture.md": "# Architecture\n\n## Risks\n\n- none\n"}},
    ]
    repo = make_team_repo(tmp_path / "repo", script)
    _new(repo)
    assert cli(repo, "run", ITEM).returncode == 3
    verdicts = [
        e for e in journal(repo) if e["event"] == "review.verdict" and e["node"] == "architecture"
    ]
    assert "records no risks" in verdicts[0]["issues"][0]["description"]


def test_plan_needs_dependencies_acceptance_checks_and_done_when(tmp_path: Path) -> None:
    """PLAN gate: every task needs dependencies, acceptance_checks and done_when, known
    dependencies and no cycle; a plan without them goes back to the Planner."""
    broken = task_entries()
    del broken[0]["dependencies"]
    broken[1]["acceptance_checks"] = []
    broken[1]["dependencies"] = ["T9"]
    del broken[1]["done_when"]
    script = team_script()
    script["planner"]["plan"] = [
        {"write": {"{item_dir}/tasks.yaml": tasks_yaml(broken)}},
        {"write": {"{item_dir}/tasks.yaml": tasks_yaml()}},
    ]
    repo = make_team_repo(tmp_path / "repo", script)
    _new(repo)
    result = cli(repo, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert result.returncode == 3 and "UD-REVIEW-STRATEGY" in result.stderr
    verdicts = [e for e in journal(repo) if e["event"] == "review.verdict" and e["node"] == "plan"]
    problems = " ".join(i["description"] for i in verdicts[0]["issues"])
    assert "task T1 has no 'dependencies' list" in problems
    assert "task T2 has no acceptance_checks" in problems
    assert "task T2 has no done_when" in problems
    assert "task T2 depends on T9, which is not a task" in problems
