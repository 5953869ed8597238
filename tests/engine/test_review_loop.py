"""The executor-reviewer loop of seed 000 section 5 and seed 001, run for real."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import approving_script, calls, make_repo, read_meta

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.runner import RunOptions

BLOCKER = {"severity": "blocker", "description": "No acceptance criteria", "location": "## Req"}
REJECT = {"verdict": {"approved": False, "issues": [BLOCKER], "summary": "needs criteria"}}
APPROVE = {"verdict": {"approved": True, "issues": [], "summary": "complete"}}


def script_with(phase: str, reviewer: str, verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    script = approving_script()
    script[reviewer] = {phase: verdicts, "*": [APPROVE]}
    return script


def run_phase(
    repo_root: Path,
    script: dict[str, Any],
    phase: str,
    mode: str = "standard",
    text_only: bool = False,
    **options: Any,
) -> tuple[ScriptedBackend, dict[str, Any]]:
    """Run the workflow up to ``phase`` with scripted agents; return the backend and state.

    ``text_only`` makes the agents stand in for a backend without schema output.
    """
    repo = make_repo(repo_root)
    repo.new("item", mode=mode, description="Add rate limiting")
    backend = ScriptedBackend(script=script, structured_output=not text_only)
    repo.run("item", backends={"default": backend}, options=RunOptions(until=phase, **options))
    state = read_meta(repo_root / "docs/features/item")
    return backend, state


def test_rejected_review_sends_issues_back_to_the_executor(git_repo: Path) -> None:
    """Seed 001 feedback integration: the revising executor receives the reviewer's issues."""
    backend, _ = run_phase(
        git_repo, script_with("specify", "chain-reviewer", [REJECT, APPROVE]), "specify"
    )
    executor_calls = calls(backend, "executor", "specify")
    assert len(executor_calls) == 2
    first, second = (c.prompt_text() for c in executor_calls)
    assert "No acceptance criteria" not in first
    assert "No acceptance criteria" in second
    assert "(at ## Req)" in second


def test_reviewer_sees_previous_artifact_current_artifact_and_next_phase_needs(
    git_repo: Path,
) -> None:
    """Seed 000 interface 2: reviewer input is previous artifact, current one, expectations."""
    backend, _ = run_phase(git_repo, approving_script(), "specify")
    (review,) = calls(backend, "chain-reviewer", "specify")
    text = review.prompt_text()
    assert "Previous artifact: brainstorm.md" in text and "# Brainstorm\nproblem" in text
    assert "Current artifact: spec.md" in text and "# Spec\nR1" in text
    assert "Design needs: all requirements listed, acceptance criteria defined" in text
    assert review.output_schema is not None
    assert review.access.value == "read-only"


def test_approval_ends_the_loop_and_marks_the_phase_completed(git_repo: Path) -> None:
    """Seed 000 5d: approved -> phase completed with its iteration count."""
    backend, state = run_phase(
        git_repo, script_with("specify", "chain-reviewer", [REJECT, APPROVE]), "specify"
    )
    spec = state["phases"]["specify"]
    assert spec["completed"] and spec["iterations"] == 2
    assert spec["reviewerNotes"] == [] and spec["verified"] is True
    assert len(calls(backend, "chain-reviewer", "specify")) == 2
    assert state["currentPhase"] == "specify"


@pytest.mark.parametrize(
    ("mode", "limit"), [("hotfix", 1), ("quick", 2), ("standard", 3), ("full", 5)]
)
def test_loop_stops_at_the_mode_limit_and_records_reviewer_notes(
    git_repo: Path, mode: str, limit: int
) -> None:
    """TD3: Hotfix=1, Quick=2, Standard=3, Full=5; at the limit concerns become reviewerNotes."""
    backend, state = run_phase(
        git_repo, script_with("specify", "chain-reviewer", [REJECT]), "specify", mode=mode
    )
    assert len(calls(backend, "executor", "specify")) == limit
    assert len(calls(backend, "chain-reviewer", "specify")) == limit
    spec = state["phases"]["specify"]
    assert spec["iterations"] == limit
    assert spec["completed"]
    assert spec["verified"] is False
    assert spec["reviewerNotes"] == ["[blocker] No acceptance criteria (at ## Req)"]


def test_approval_with_a_blocker_is_not_approved(git_repo: Path) -> None:
    """Approved only with no blocker: a reviewer saying approved but listing one is overruled."""
    contradictory = {"verdict": {"approved": True, "issues": [BLOCKER], "summary": "fine"}}
    backend, state = run_phase(
        git_repo, script_with("specify", "chain-reviewer", [contradictory, APPROVE]), "specify"
    )
    assert state["phases"]["specify"]["iterations"] == 2
    assert len(calls(backend, "executor", "specify")) == 2


def test_unclear_review_is_never_approved(git_repo: Path) -> None:
    """An answer that cannot be read as a verdict is recorded as unclear, not approved."""
    garbage = {"text": "Hmm, interesting work. Let me think about it."}
    _, state = run_phase(
        git_repo, script_with("specify", "chain-reviewer", [garbage]), "specify", mode="hotfix"
    )
    spec = state["phases"]["specify"]
    assert spec["verified"] is False
    (record,) = [r for r in state["engine"]["iterations"] if r["phase"] == "specify"]
    assert record["unclear"] is True and record["approved"] is False
    history = (git_repo / "docs/features/item/.review-history.md").read_text()
    assert "unclear (not approved)" in history


def test_free_text_approval_pattern_is_read_conservatively(git_repo: Path) -> None:
    """Seed 004 fuzzy detection: 'LGTM' on the first line approves a text-only reviewer."""
    _, state = run_phase(
        git_repo,
        script_with("specify", "chain-reviewer", [{"text": "LGTM"}]),
        "specify",
        text_only=True,
    )
    assert state["phases"]["specify"]["verified"] is True


def test_empty_artifact_is_a_blocker_without_asking_the_reviewer(git_repo: Path) -> None:
    """Interface 2 errors: an empty artifact is not approved, with a blocker, decided in code."""
    script = approving_script()
    script["executor"]["specify"] = [{"write": {"{item_dir}/spec.md": "   \n"}}]
    backend, state = run_phase(git_repo, script, "specify", mode="quick")
    assert calls(backend, "chain-reviewer", "specify") == []
    records = [r for r in state["engine"]["iterations"] if r["phase"] == "specify"]
    assert [r["source"] for r in records] == ["engine", "engine"]
    assert "spec.md is missing or empty" in records[0]["issues"][0]["description"]
    assert records[0]["issues"][0]["severity"] == "blocker"


def test_missing_required_previous_artifact_is_a_blocker(git_repo: Path) -> None:
    """Interface 2 errors: design without spec.md is not approved, with a blocker."""
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    backend = ScriptedBackend(script=approving_script())
    repo.run("item", backends={"default": backend}, options=RunOptions(phase="design", yes=True))
    state = read_meta(git_repo / "docs/features/item")
    (record,) = state["engine"]["iterations"]
    assert record["approved"] is False
    assert "previous artifact spec.md is missing" in record["issues"][0]["description"]
    assert "run the specify phase first" in record["issues"][0]["description"]
    assert calls(backend, "chain-reviewer") == []
    # Revising design cannot create spec.md, so the loop stops after one look.
    assert len(calls(backend, "executor", "design")) == 1
    assert state["phases"]["design"]["reviewerNotes"]


def test_review_history_follows_the_interface_4_format(git_repo: Path) -> None:
    """Seed 000 interface 4: phase heading, iteration heading, feedback, issues, changes, rule."""
    run_phase(git_repo, script_with("specify", "chain-reviewer", [REJECT, APPROVE]), "specify")
    history = (git_repo / "docs/features/item/.review-history.md").read_text()
    block = history.split("## Phase: specify\n", 1)[1]
    assert re.match(r"\n### Iteration 1 - \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n", block)
    assert "**Reviewer Feedback:**\nneeds criteria\n" in block
    assert "**Issues:**\n- [blocker] No acceptance criteria (at ## Req)\n" in block
    assert "**Changes Made:**\nwrote spec\n" in block
    assert "\n---\n" in block
    assert "### Iteration 2 - " in block


def test_no_review_flag_skips_the_reviewer(git_repo: Path) -> None:
    """Seed 001 decision 3: --no-review skips the reviewer."""
    backend, state = run_phase(git_repo, approving_script(), "specify", no_review=True)
    assert calls(backend, "chain-reviewer") == []
    assert state["phases"]["specify"]["review"] == "skipped"
    assert state["phases"]["specify"]["completed"]


def test_failing_check_goes_back_to_the_executor_before_any_review(git_repo: Path) -> None:
    """A failing check is a blocker fed back to the executor; the reviewer waits for green."""
    script = approving_script()
    script["executor"]["implement"] = [
        {"write": {"app.py": "ok = False\n"}},
        {"write": {"app.py": "ok = True\n"}},
    ]
    repo = make_repo(
        git_repo,
        commands={
            "test": "python3 -c \"import sys; sys.path.insert(0, '.'); import app; "
            "sys.exit(0 if app.ok else 'app.ok is False')\""
        },
    )
    repo.new("item", mode="standard")
    backend = ScriptedBackend(script=script)
    repo.run("item", backends={"default": backend}, options=RunOptions(until="implement"))
    _first, second = calls(backend, "executor", "implement")
    assert "app.ok is False" in second.prompt_text()
    assert "check 'test'" in second.prompt_text()
    (review,) = calls(backend, "final-reviewer", "implement")
    assert review.labels["iteration"] == "2"
    assert "ok = True" in review.prompt_text()


def test_final_reviewer_gets_the_spec_and_the_implementation(git_repo: Path) -> None:
    """Seed 000 final reviewer: spec.md against the implementation (the work tree's changes)."""
    backend, _ = run_phase(git_repo, approving_script(), "implement")
    (review,) = calls(backend, "final-reviewer", "implement")
    text = review.prompt_text()
    assert "Previous artifact: spec.md" in text and "# Spec\nR1" in text
    assert "New file `app.py`" in text and "print('hi')" in text
    assert "docs/features/item" not in text.split("Implementation changes", 1)[1].split("##")[0]


def test_empty_implementation_is_a_blocker(git_repo: Path) -> None:
    """Interface 2 errors applied to code: no changes in the work tree is not approved."""
    script = approving_script()
    script["executor"]["implement"] = [{"text": "did nothing"}]
    backend, state = run_phase(git_repo, script, "implement", mode="hotfix")
    assert calls(backend, "final-reviewer") == []
    (record,) = [r for r in state["engine"]["iterations"] if r["phase"] == "implement"]
    assert "No implementation changes" in record["issues"][0]["description"]


def test_whole_feature_workflow_finishes_and_deletes_the_history(git_repo: Path) -> None:
    """Seed 000 /finish: status complete, summary kept in .meta.json, history deleted (TD5)."""
    repo = make_repo(git_repo)
    repo.new("item")
    outcome = repo.run("item", backends={"default": ScriptedBackend(script=approving_script())})
    assert outcome.status == "completed"
    folder = git_repo / "docs/features/item"
    state = json.loads((folder / ".meta.json").read_text())
    assert state["status"] == "completed"
    assert state["summary"].startswith("7 phases completed in 7 review iterations")
    assert not (folder / ".review-history.md").exists()
    assert state["phases"]["verify"]["summary"] == "ok"
    expected = [
        "brainstorm",
        "specify",
        "design",
        "create-plan",
        "create-tasks",
        "implement",
        "verify",
        "finish",
    ]
    assert list(state["phases"]) == expected


def test_state_file_is_current_while_a_slow_agent_works(git_repo: Path) -> None:
    """Group commit never hides progress from a slow agent's watchers.

    Once an agent call takes longer than the coalescing window, every step is
    committed before the next call starts, so `phasegate status` read during
    that call shows where the run stands.
    """
    import time

    from phasegate.agents.base import AgentRequest
    from phasegate.agents.scripted import ScriptedReply

    folder = git_repo / "docs/features/item"
    seen: list[tuple[str, str, int]] = []

    def agent(request: AgentRequest) -> ScriptedReply:
        on_disk = read_meta(folder)["engine"]["cursor"]
        seen.append((request.role, on_disk["stage"], on_disk["iteration"]))
        time.sleep(0.3)
        if request.role == "executor":
            return ScriptedReply(write={"{item_dir}/brainstorm.md": "# B\n"})
        return ScriptedReply(structured={"approved": True, "issues": [], "summary": "ok"})

    repo = make_repo(git_repo)
    repo.new("item")
    repo.run(
        "item",
        backends={"default": ScriptedBackend(handler=agent)},
        options=RunOptions(until="brainstorm"),
    )
    assert seen == [("executor", "execute", 1), ("chain-reviewer", "review", 1)]


def test_the_next_reviewer_is_shown_the_issues_of_the_previous_iteration(git_repo: Path) -> None:
    """Seed 000 loop: the reviewer of iteration 2 sees what iteration 1 raised, to check it
    was addressed; the reviewer of iteration 1 sees no such list."""
    backend, _ = run_phase(
        git_repo, script_with("specify", "chain-reviewer", [REJECT, APPROVE]), "specify"
    )
    first, second = (c.prompt_text() for c in calls(backend, "chain-reviewer", "specify"))
    assert "Issues raised in the previous iteration" not in first
    raised = second.split("Issues raised in the previous iteration", 1)[1]
    assert "[blocker] No acceptance criteria (at ## Req)" in raised


def test_the_implement_reviewer_is_given_tasks_md(git_repo: Path) -> None:
    """The final reviewer of implement checks that every task was addressed: tasks.md is in
    its prompt, beside spec.md and the implementation."""
    backend, _ = run_phase(git_repo, approving_script(), "implement")
    (review,) = calls(backend, "final-reviewer", "implement")
    assert "# Tasks\n- [ ] t1" in review.prompt_text()
    assert "Input: tasks.md" in review.prompt_text()


def test_a_summary_only_rejection_from_a_text_reviewer_is_the_feedback(git_repo: Path) -> None:
    """A rejection naming no issue (here free text: NEEDS_REVISION and a reason) gives the
    executor the reviewer's words, and stays as the concern when the budget is spent."""
    script = script_with(
        "specify", "chain-reviewer", [{"text": "NEEDS_REVISION\nScope is unclear."}]
    )
    backend, state = run_phase(git_repo, script, "specify", mode="quick", text_only=True)
    _, second = calls(backend, "executor", "specify")
    assert "Scope is unclear." in second.prompt_text()
    assert state["phases"]["specify"]["reviewerNotes"] == ["[blocker] Scope is unclear."]
