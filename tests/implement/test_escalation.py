"""Review timeouts and escalation (seed 004: Timeout Handling, Review Cycle Limits,
User Escalation Timeout Configuration; issue rules 5-7)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, Team, cycles_file, journal, key, make_repo, new_item, run

from phasegate.api import Repo
from phasegate.errors import BadInputError, BlockedError, WaitingForHuman
from phasegate.implement.plan import parse_plan

TWO_TASKS = """# Implementation Plan

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`] [`review_focus: security`]
  - HMAC over the raw body

- [ ] **Document the signature header** [`agent: the-developer`] [`review: false`]
"""
SIGN = key("Sign outgoing payloads")
DOCS = key("Document the signature header")


def settings(**escalation: Any) -> dict[str, Any]:
    return {
        "retries": {"agent": 1},
        "workflows": {
            "implement": {
                "settings": {
                    "review_timeout_minutes": 0.005,  # 0.3 seconds
                    "max_cycles": 2,
                    "escalation": escalation,
                }
            }
        },
    }


def team(review: list[dict[str, Any]]) -> Team:
    return Team(
        {
            "the-developer": {
                "Sign outgoing payloads": [{"write": {"src/sign.py": "KEY = 1\n"}, "text": "s"}],
                "Document the signature header": [{"write": {"docs/sig.md": "# X\n"}}],
            },
            "the-security-engineer": {"*": review},
        }
    )


def plan_lines(root: Path) -> list[str]:
    return (root / PLAN).read_text().splitlines()


def events(root: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in journal(root) if e["event"] == name]


def test_a_review_that_times_out_is_skipped_with_a_warning_by_default(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """TIMEOUT: apply the default action (skip_with_warning), log it with context, notify on
    the console, and continue: the next task still runs."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    agents = team([{"sleep": 2, "text": "APPROVED"}])
    assert run(new_item(root, settings()), agents).status == "completed"
    lines = plan_lines(root)
    assert lines[4].startswith("- [x] **Sign outgoing payloads**")
    assert lines[5].startswith("  - ⚠️ Skipped with warning (phasegate): the review timed out")
    assert any(line.startswith("- [x] **Document the signature header**") for line in lines)
    (escalation,) = events(root, "implement.escalation")
    assert escalation["cause"] == "review timed out"
    assert escalation["default_action"] == "skip_with_warning"
    assert escalation["reviewer"] == "the-security-engineer" and escalation["cycle"] == 1
    review = cycles_file(root)["sessions"]["006"]["tasks"][SIGN]["reviewers"][0]
    assert review["status"] == "TIMEOUT"
    assert "skip_with_warning" in capfd.readouterr().err


def test_a_timed_out_review_is_not_dispatched_again(tmp_path: Path) -> None:
    """A review's timeout is its answer: it is not retried (retries.agent is 1 here)."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    agents = team([{"sleep": 2, "text": "APPROVED"}])
    run(new_item(root, settings()), agents)
    assert agents.reviewers() == ["the-security-engineer"]
    assert len(events(root, "review.timeout")) == 1


def test_a_review_timeout_can_accept_the_task_as_is(tmp_path: Path) -> None:
    """default_action accept_as_is: the task is ticked, noted as accepted, and the run goes on."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    agents = team([{"sleep": 2, "text": "APPROVED"}])
    item = new_item(root, settings(default_action="accept_as_is"))
    assert run(item, agents).status == "completed"
    lines = plan_lines(root)
    assert lines[4].startswith("- [x] **Sign outgoing payloads**")
    assert lines[5].startswith("  - Accepted as is (phasegate): the review timed out")
    status = {t["key"]: t["state"] for t in item.status("006")["tasks"]}
    assert status == {SIGN: "accepted", DOCS: "done"}


def test_a_review_timeout_can_abort_the_process(tmp_path: Path) -> None:
    """default_action abort_process: the run stops (exit 4) before the next task, nothing is
    ticked, and running again stops the same way until a person answers how to go on."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    reviews: list[dict[str, Any]] = [{"sleep": 2, "text": "APPROVED"}]
    agents = team(reviews)
    item = new_item(root, settings(default_action="abort_process"))
    with pytest.raises(BlockedError, match=f"aborted-{SIGN} retry"):
        run(item, agents)
    assert not any(line.startswith("- [x]") for line in plan_lines(root))
    assert len(agents.calls("the-developer")) == 1
    with pytest.raises(BlockedError):
        run(item, agents)
    item.answer("006", f"aborted-{SIGN}", "retry")
    reviews[:] = [{"text": "APPROVED"}]
    assert run(item, agents).status == "completed"
    assert plan_lines(root)[4].startswith("- [x] **Sign outgoing payloads**")


def test_the_cycle_limit_escalates_to_a_person_with_the_seeds_options(tmp_path: Path) -> None:
    """After max_cycles revisions the task is escalated: accept as-is, manually fix, skip,
    abort (plus the configured default); without a terminal the run stops with exit 3."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    agents = team([{"text": "NEEDS_REVISION\nUse a constant-time comparison."}])
    item = new_item(root, settings(timeout_minutes=0))
    with pytest.raises(WaitingForHuman) as waiting:
        run(item, agents)
    assert f"phasegate answer 006 escalate-{SIGN}" in str(waiting.value)
    assert len(agents.reviewers()) == 2  # max_cycles
    (decision,) = item.decisions("006")
    assert list(decision["choices"]) == [
        "accept_as_is",
        "manual_fix",
        "skip_with_warning",
        "abort_process",
        "default",
    ]
    assert "still NEEDS_REVISION after 2 review cycle(s)" in decision["question"]
    item.answer("006", f"escalate-{SIGN}", "skip_with_warning")
    assert run(item, agents).status == "completed"
    assert plan_lines(root)[5].startswith("  - ⚠️ Skipped with warning (phasegate): still")


def test_only_the_configured_escalation_actions_are_offered(tmp_path: Path) -> None:
    """escalation.actions limits what a person may choose at an escalation."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    agents = team([{"text": "NEEDS_REVISION\nUse a constant-time comparison."}])
    item = new_item(root, settings(actions=["skip_with_warning"], timeout_minutes=0))
    with pytest.raises(WaitingForHuman):
        run(item, agents)
    (decision,) = item.decisions("006")
    assert list(decision["choices"]) == ["manual_fix", "skip_with_warning", "default"]
    with pytest.raises(BadInputError, match="'abort_process' is not a choice"):
        run(item, agents, answers={f"escalate-{SIGN}": "abort_process"})


def test_an_unanswered_escalation_takes_the_default_after_its_timeout(tmp_path: Path) -> None:
    """An escalation nobody answers within escalation.timeout_minutes takes default_action."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    agents = team([{"text": "NEEDS_REVISION\nUse a constant-time comparison."}])
    item = new_item(root, settings(timeout_minutes=0.05, default_action="accept_as_is"))
    started = time.monotonic()
    assert run(item, agents, wait=True).status == "completed"
    # 3 seconds from the question, which is recorded to the second.
    assert time.monotonic() - started >= 2.0
    answered = next(e for e in events(root, "decision") if e["id"] == f"escalate-{SIGN}")
    assert (answered["answer"], answered["by"]) == ("default", "timeout")
    (escalation,) = events(root, "implement.escalation")
    assert escalation["cause"] == "escalation not answered in time"
    assert plan_lines(root)[5].startswith("  - Accepted as is (phasegate)")


def test_an_expired_escalation_is_taken_by_the_next_run(tmp_path: Path) -> None:
    """Without --wait the run stops (exit 3); a run after the timeout takes the default."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    agents = team([{"text": "NEEDS_REVISION\nUse a constant-time comparison."}])
    item = new_item(root, settings(timeout_minutes=0.05))
    with pytest.raises(WaitingForHuman):
        run(item, agents)
    time.sleep(3.1)
    assert run(item, agents).status == "completed"
    assert plan_lines(root)[5].startswith("  - ⚠️ Skipped with warning (phasegate)")


def test_manual_fix_pauses_until_a_person_has_fixed_it(tmp_path: Path) -> None:
    """manually fix: the run pauses for the person (to fix it in the work tree, the task
    running alone); answered 'review', the task is reviewed again and its approval ticks
    it."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    reviews: list[dict[str, Any]] = [{"text": "NEEDS_REVISION\nUse a constant-time comparison."}]
    agents = team(reviews)
    item = new_item(root, settings(timeout_minutes=0))
    with pytest.raises(WaitingForHuman):
        run(item, agents)
    item.answer("006", f"escalate-{SIGN}", "manual_fix")
    with pytest.raises(WaitingForHuman, match=f"manual-fix-{SIGN} review") as waiting:
        run(item, agents)
    assert "Fix it in the work tree, then answer" in str(waiting.value)
    (root / "src" / "sign.py").write_text("import hmac\nKEY = 1\n")
    item.answer("006", f"manual-fix-{SIGN}", "review")
    reviews[:] = [{"text": "APPROVED"}]
    assert run(item, agents).status == "completed"
    assert len(agents.reviewers()) == 3
    assert plan_lines(root)[4].startswith("- [x] **Sign outgoing payloads**")


def test_an_unclear_review_asks_a_person_and_is_never_approval(tmp_path: Path) -> None:
    """UNCLEAR requires user clarification: the task is not ticked; without a terminal the
    run stops with exit 3; the person's 'revise' note goes back to the implementer."""
    root = make_repo(tmp_path / "repo", TWO_TASKS)
    reviews: list[dict[str, Any]] = [{"text": "Great work, but one bug in the header."}]
    agents = team(reviews)
    item: Repo = new_item(root, settings(timeout_minutes=0))
    with pytest.raises(WaitingForHuman, match=f"unclear-{SIGN}") as waiting:
        run(item, agents)
    # The answer command shown (and put in the agents' context) never suggests approving.
    assert f"phasegate answer 006 unclear-{SIGN} escalate" in str(waiting.value)
    assert f"unclear-{SIGN} approve" not in str(waiting.value)
    assert not plan_lines(root)[4].startswith("- [x]")
    item.answer("006", f"unclear-{SIGN}", "revise: compare signatures in constant time")
    reviews[:] = [{"text": "APPROVED"}]
    assert run(item, agents).status == "completed"
    assert "compare signatures in constant time" in agents.calls("the-developer")[1].prompt_text()
    plan = parse_plan((root / PLAN).read_text(), root / PLAN)
    assert plan.task(SIGN) is not None and plan.task(SIGN).done  # type: ignore[union-attr]
