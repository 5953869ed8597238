"""APPROVE_DESIGN (seed 003): the mandatory approval gate, step by step, enforced in code."""

from __future__ import annotations

import json
import signal
from collections.abc import Sequence
from pathlib import Path

import pytest
from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    decision,
    dispatched,
    journal,
    make_team_repo,
    status_json,
    team_repo_api,
    team_script,
)

from phasegate.engine.plugin_api import PluginContext
from phasegate.errors import BlockedError, WaitingForHuman
from phasegate.plugins import load
from phasegate.team.actions import route_correction
from phasegate.team.rules import classify_approval


def _at_gate(tmp_path: Path, description: str = DESCRIPTION, script: dict | None = None) -> Path:
    repo = make_team_repo(tmp_path / "repo", script)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", description).returncode == 0
    result = cli(repo, "run", ITEM)
    assert result.returncode == 3, result.stderr
    return repo


def test_approve_design_is_pending_in_status_json_before_it_is_asked(tmp_path: Path) -> None:
    """APPROVE_DESIGN step 1: UD-APPROVE-DESIGN is written ``pending`` before it is asked;
    ``current_state`` is APPROVE_DESIGN (a state of its own, not ASK_USER)."""
    repo = _at_gate(tmp_path)
    entry = decision(repo, "UD-APPROVE-DESIGN")
    assert (entry["status"], entry["answer"], entry["resolved_at"]) == ("pending", None, None)
    assert entry["state_context"] == "APPROVE_DESIGN" and entry["asked_at"]
    assert status_json(repo)["current_state"] == "APPROVE_DESIGN"
    needed = [e for e in journal(repo) if e["event"] == "decision.needed"]
    assert [e["id"] for e in needed] == ["UD-APPROVE-DESIGN"]


def test_approval_question_shows_spec_architecture_and_design_specs(tmp_path: Path) -> None:
    """APPROVE_DESIGN Mechanism: the person is shown spec.md, architecture.md and the design
    specs (the Designer ran because the request involves a user interface)."""
    script = team_script()
    script["designer"] = {
        "design-specs": [{"write": {"{item_dir}/design-specs/login-form.md": "# Form\n"}}]
    }
    repo = _at_gate(tmp_path, "Add a rate limit message to the login form", script)
    listed = json.loads(cli(repo, "decisions", ITEM, "--json").stdout)
    (gate,) = listed
    assert gate["id"] == "UD-APPROVE-DESIGN"
    assert {"spec.md", "architecture.md", "design-specs/login-form.md"} <= set(gate["files"])
    assert "design specs: design-specs/login-form.md" in gate["question"]
    assert "2 acceptance criteria (AC-1, AC-2)" in gate["question"]


@pytest.mark.parametrize(
    ("said", "read_as"),
    [
        ("approved", "approved"),
        ("Looks good, go ahead", "approved"),
        ("LGTM", "approved"),
        ("fix the error message wording", "changes-requested: fix the error message wording"),
        (
            "I have concerns about the counter",
            "changes-requested: I have concerns about the counter",
        ),
        ("changes-requested: use Redis", "changes-requested: use Redis"),
        ("looks good but rename the module", "changes-requested: looks good but rename the module"),
        ("cancel", "cancel"),
        ("defer: next sprint", "cancel: next sprint"),
        ("hmm", "hmm"),
    ],
)
def test_answers_are_classified_as_approved_or_changes_requested(said: str, read_as: str) -> None:
    """APPROVE_DESIGN step 2: "looks good" is ``approved``; "fix X" is ``changes-requested:
    <summary>``; defer/cancel cancels; anything else stays invalid and is asked again."""
    assert classify_approval(said) == read_as


def test_free_text_answer_by_command_is_classified(tmp_path: Path) -> None:
    """APPROVE_DESIGN step 2 through ``phasegate answer``: the person's words are classified
    before they are recorded; an answer that classifies to nothing is refused (exit 2)."""
    repo = _at_gate(tmp_path)
    refused = cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", "maybe")
    assert refused.returncode == 2 and "not a choice" in refused.stderr
    assert decision(repo, "UD-APPROVE-DESIGN")["status"] == "pending"
    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", "looks good").returncode == 0
    assert decision(repo, "UD-APPROVE-DESIGN")["answer"] == "approved"


def test_change_request_is_recorded_routed_and_the_gate_asked_again(tmp_path: Path) -> None:
    """APPROVE_DESIGN step 2, changes requested: the answer is ``changes-requested: <summary>``,
    an audit line is appended to approve-design-history.jsonl, the correction goes to the
    agent that owns it (here the Architect), and the same decision id is asked again."""
    repo = _at_gate(tmp_path)
    summary = "use a sliding window instead of fixed buckets"
    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", f"changes-requested: {summary}")
    assert cli(repo, "run", ITEM).returncode == 3
    (line,) = (repo / SESSION / "approve-design-history.jsonl").read_text().splitlines()
    entry = json.loads(line)
    assert entry["decision_id"] == "UD-APPROVE-DESIGN" and entry["at"]
    assert entry["answer"] == f"changes-requested: {summary}"
    assert (entry["state_context"], entry["routed_to"]) == ("APPROVE_DESIGN", "Architect")
    assert [e["path"] for e in dispatched(repo)][-1] == "correct-architecture"
    again = decision(repo, "UD-APPROVE-DESIGN")
    assert (again["status"], again["visit"]) == ("pending", 2)
    ids = [d["decision_id"] for d in status_json(repo)["user_decisions"]]
    assert ids.count("UD-APPROVE-DESIGN") == 1  # a well-known id appears once


def test_corrections_go_to_the_agent_that_owns_what_must_change() -> None:
    """APPROVE_DESIGN: corrections are routed back to SpecAgent, Architect or Designer."""
    assert route_correction("the acceptance criteria miss the lockout", True) == "spec"
    assert route_correction("move the button under the field", True) == "design"
    assert route_correction("move the button under the field", False) == "architecture"
    assert route_correction("store counters in Redis", True) == "architecture"


@pytest.mark.slow
@pytest.mark.parametrize("point", ["dispatch.before_call", "agent.returned"])
def test_correction_is_dispatched_once_even_when_killed_after_the_dispatch(
    tmp_path: Path, point: str
) -> None:
    """Session resume for mandatory gate states: correction_status goes queued -> dispatched
    -> completed, and a resume never dispatches a correction twice. SIGKILL right after the
    dispatch is journaled (before the agent runs) or right after its result is journaled:
    the resumed run makes no second call and asks for approval again."""
    repo = _at_gate(tmp_path)
    assert (
        cli(
            repo, "answer", ITEM, "UD-APPROVE-DESIGN", "changes-requested: the spec must say 5"
        ).returncode
        == 0
    )
    killed = cli(repo, "run", ITEM, env={"PHASEGATE_CRASH_AT": f"{point}@1"})
    assert killed.returncode == -signal.SIGKILL
    tracking = status_json(repo)["gate_tracking"]["APPROVE_DESIGN"]
    assert tracking["correction_status"] == "dispatched"
    assert tracking["last_correction_dispatch"]["agent"] == "SpecAgent"

    resumed = cli(repo, "run", ITEM)
    assert resumed.returncode == 3, resumed.stderr
    corrections = [e for e in dispatched(repo) if e["path"] == "correct-spec"]
    assert len(corrections) == 1
    calls = (repo / ".phasegate" / "calls.jsonl").read_text().splitlines()
    made = [c for c in map(json.loads, calls) if c["role"] == "spec-agent"]
    assert len(made) == (1 if point == "dispatch.before_call" else 2)  # intake (+ correction)
    assert status_json(repo)["gate_tracking"]["APPROVE_DESIGN"]["correction_status"] == (
        "completed"
    )
    again = decision(repo, "UD-APPROVE-DESIGN")
    assert again["status"] == "pending"
    if point == "dispatch.before_call":
        assert "interrupted before it returned" in again["question"]
    else:
        assert "Refuse more than 5" in (repo / SESSION / "spec.md").read_text()
    assert len((repo / SESSION / "approve-design-history.jsonl").read_text().splitlines()) == 1


class Person:
    """Someone at a terminal typing the given answers (and what each prompt offered)."""

    interactive = True

    def __init__(self, answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.defaults: list[str | None] = []

    def choose(self, question: str, choices: Sequence[str], default: str | None) -> str:
        self.defaults.append(default)
        return self.answers.pop(0)

    def confirm(self, question: str, default: bool) -> bool:
        return default


def test_three_invalid_answers_block_with_mandatory_user_decision_missing(
    tmp_path: Path,
) -> None:
    """APPROVE_DESIGN step 2, no/invalid answer: asked 3 times (an empty answer is no answer:
    the prompt offers no default), then BLOCKED with mandatory_user_decision_missing; the
    counter is not kept, so the next run asks again."""
    repo_dir = make_team_repo(tmp_path / "repo")
    repo = team_repo_api(repo_dir)
    repo.new(ITEM, workflow="team", description=DESCRIPTION)
    person = Person(["", "hmm", "what?"])
    with pytest.raises(BlockedError):
        repo.run(ITEM, asker=person)
    assert person.defaults == [None, None, None]
    status = status_json(repo_dir)
    assert status["current_state"] == "BLOCKED"
    assert status["blocker"]["reason"] == "mandatory_user_decision_missing"
    entry = decision(repo_dir, "UD-APPROVE-DESIGN")
    assert entry["status"] == "cancelled" and "no valid answer" in entry["resolution_reason"]
    with pytest.raises(WaitingForHuman):
        repo.run(ITEM)
    assert decision(repo_dir, "UD-APPROVE-DESIGN")["status"] == "pending"


def test_cancel_blocks_and_the_next_run_asks_again(tmp_path: Path) -> None:
    """APPROVE_DESIGN step 2, explicit cancel: ``cancelled`` with its reason, BLOCKED
    (mandatory_user_decision_missing), exit 4; running again asks the gate again."""
    repo = _at_gate(tmp_path)
    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", "defer: waiting on legal").returncode == 0
    blocked = cli(repo, "run", ITEM)
    assert blocked.returncode == 4, blocked.stderr
    status = status_json(repo)
    assert status["current_state"] == "BLOCKED"
    assert status["blocker"]["reason"] == "mandatory_user_decision_missing"
    entry = decision(repo, "UD-APPROVE-DESIGN")
    assert entry["status"] == "cancelled"
    assert entry["resolution_reason"] == "cancelled by the user: waiting on legal"
    assert cli(repo, "run", ITEM).returncode == 3
    assert decision(repo, "UD-APPROVE-DESIGN")["status"] == "pending"
    assert not [e for e in dispatched(repo) if e["role"] == "planner"]


def test_cancel_without_a_reason_says_why_the_session_is_blocked(tmp_path: Path) -> None:
    """APPROVE_DESIGN step 2, explicit cancel: the run's one-line error (exit 4) and
    status.json's blocker say the session is BLOCKED for mandatory_user_decision_missing
    and that the next run asks again, not just that the gate "ended cancel"."""
    repo = _at_gate(tmp_path)
    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", "cancel").returncode == 0
    blocked = cli(repo, "run", ITEM)
    assert blocked.returncode == 4, blocked.stderr
    error = [line for line in blocked.stderr.splitlines() if line.startswith("phasegate: error")]
    assert len(error) == 1
    assert "BLOCKED (mandatory_user_decision_missing)" in error[0]
    assert "the next run asks again" in error[0]
    assert f"phasegate run {ITEM}" in error[0]
    assert "mandatory_user_decision_missing" in status_json(repo)["blocker"]["message"]


def test_resume_in_approve_design_resumes_the_gate_itself(tmp_path: Path) -> None:
    """Session resume: with current_state APPROVE_DESIGN, running again asks the same gate
    (same decision, same visit) without dispatching any agent."""
    repo = _at_gate(tmp_path)
    before = len(dispatched(repo))
    assert cli(repo, "run", ITEM).returncode == 3
    assert len(dispatched(repo)) == before
    entry = decision(repo, "UD-APPROVE-DESIGN")
    assert (entry["status"], entry["visit"]) == ("pending", 1)


def test_approval_is_read_back_from_status_json_before_plan(tmp_path: Path) -> None:
    """APPROVE_DESIGN step 3: status.json is re-read and must hold UD-APPROVE-DESIGN answered
    ``approved``; a file that does not is written again from the state and read again (up to
    3 times); a state whose answer is not ``approved`` never verifies."""
    repo_dir = _at_gate(tmp_path)
    assert cli(repo_dir, "answer", ITEM, "UD-APPROVE-DESIGN", "approved").returncode == 0
    assert cli(repo_dir, "run", ITEM).returncode == 3  # on to REVIEW_STRATEGY
    verified = [e for e in journal(repo_dir) if e["event"] == "decision.verified"]
    assert verified[0]["id"] == "UD-APPROVE-DESIGN" and verified[0]["attempt"] == 1
    planner = next(i for i, e in enumerate(journal(repo_dir)) if e.get("role") == "planner")
    assert journal(repo_dir).index(verified[0]) < planner

    item = team_repo_api(repo_dir).item(ITEM)
    state = item.load()
    path = item.item_dir / "status.json"
    stale = json.loads(path.read_text())
    for entry in stale["user_decisions"]:
        if entry["decision_id"] == "UD-APPROVE-DESIGN":
            entry.update(answer="changes-requested: stale", status="answered")
    path.write_text(json.dumps(stale))
    action = load("actions", "team-verify-decision")
    settings = {"decision": "UD-APPROVE-DESIGN", "answer_starts_with": "approved"}
    ctx = PluginContext(item, state, "approve-verify", None, None, settings)
    assert action.run(ctx) == "verified"
    assert [e["attempt"] for e in journal(repo_dir) if e["event"] == "decision.verified"][-1] == 2
    state.decisions["UD-APPROVE-DESIGN"]["answer"]["choice"] = "changes-requested"
    path.write_text(json.dumps(stale))
    assert action.run(ctx) == "unverified"
    assert any(e["event"] == "decision.unverified" for e in journal(repo_dir))


def test_plan_never_starts_before_approval(tmp_path: Path) -> None:
    """APPROVE_DESIGN: the workflow MUST NOT proceed to PLAN until the person approves, even
    when run with an answer for the next gate ready."""
    repo = make_team_repo(tmp_path / "repo")
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    result = cli(repo, "run", ITEM, "--answer", "UD-REVIEW-STRATEGY=per-batch")
    assert result.returncode == 3
    assert not [e for e in dispatched(repo) if e["role"] == "planner"]


@pytest.mark.parametrize("answer", [None, "cancel"])
def test_no_phase_jump_goes_past_an_unapproved_design(tmp_path: Path, answer: str | None) -> None:
    """Seed 003, "Workflow MUST NOT proceed to PLAN until the user approves": ``run --phase PLAN
    --yes`` (pending, or after a cancel) used to start the Planner, and the session could
    reach DONE with the design never approved. It is blocked (exit 4) naming the decision
    and the command that answers it, and no agent is dispatched."""
    repo = _at_gate(tmp_path)
    if answer is not None:
        assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", answer).returncode == 0
        assert cli(repo, "run", ITEM).returncode == 4
    before = len(dispatched(repo))
    for target in ("PLAN", "IMPLEMENT_LOOP"):
        jumped = cli(repo, "run", ITEM, "--phase", target, "--yes")
        assert jumped.returncode == 4, jumped.stderr
        assert "until decision UD-APPROVE-DESIGN is answered approved" in jumped.stderr
        assert f"phasegate answer {ITEM} UD-APPROVE-DESIGN approved" in jumped.stderr
    assert len(dispatched(repo)) == before
    assert status_json(repo)["current_state"] in ("APPROVE_DESIGN", "BLOCKED")


def test_a_phase_jump_past_an_approved_design_still_works(tmp_path: Path) -> None:
    repo = _at_gate(tmp_path)
    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", "approved").returncode == 0
    jumped = cli(repo, "run", ITEM, "--phase", "PLAN", "--yes")
    assert jumped.returncode == 0, jumped.stderr
    assert any(d["role"] == "planner" for d in dispatched(repo))
