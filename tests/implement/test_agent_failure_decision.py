"""Seed 004's agent failures: a task whose agent's call fails every attempt is a decision
for a person (retry it, skip it with a warning, or abort), not a run that stops with exit 6
at every run; the failure is journaled, so the next run asks again without calling the
agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, cli
from test_implement_cli import ONE_TASK, SIGN, scripted_repo

FAILING = {
    "the-developer": {"implement": [{"fail": {"exit": 1, "error": "the model is overloaded"}}]},
    "*": {"*": [{"text": "APPROVED"}]},
}
WORKING = {
    "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}, "text": "done"}]},
    "*": {"*": [{"text": "APPROVED"}]},
}


def _dispatched(root: Path) -> int:
    journal = root / ".phasegate" / "implement" / "006" / ".journal.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    return len(
        [e for e in events if e.get("event") == "agent.dispatched" and e.get("stage") == "execute"]
    )


def _failed_repo(tmp_path: Path) -> tuple[Path, Any]:
    root = scripted_repo(tmp_path, dict(FAILING), plan=ONE_TASK)
    first = cli(root, "implement", "006")
    return root, first


def test_failed_agent_asks_a_person_and_is_not_called_again(tmp_path: Path) -> None:
    root, first = _failed_repo(tmp_path)
    said = first.stdout + first.stderr
    assert first.returncode == 3, said
    assert f"failed-{SIGN}" in said, said
    assert "the model is overloaded" in said, said
    assert _dispatched(root) == 2  # retries.agent: 1, so two attempts

    status = json.loads(cli(root, "status", "006", "--json").stdout)
    (row,) = status["tasks"]
    assert (row["state"], row["decision"]) == ("agent failed", f"failed-{SIGN}"), row
    assert "the model is overloaded" in row["question"], row
    assert "Retry it, skip it with a warning, or abort?" in row["question"], row

    again = cli(root, "implement", "006")
    assert again.returncode == 3, again.stdout + again.stderr
    assert _dispatched(root) == 2  # the journaled failure is reused: no new call


def test_skipping_a_failed_task_goes_on_with_a_warning(tmp_path: Path) -> None:
    root, first = _failed_repo(tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    answered = cli(root, "answer", "006", f"failed-{SIGN}", "skip_with_warning")
    assert answered.returncode == 0, answered.stderr
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stdout + done.stderr
    plan = (root / PLAN).read_text()
    assert "- [x] **Sign outgoing payloads**" in plan, plan
    assert "⚠️ Skipped with warning (phasegate): the-developer" in plan, plan
    assert "the model is overloaded" in plan, plan
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert row["state"] == "skipped", row
    assert _dispatched(root) == 2


def test_retrying_a_failed_task_calls_its_agent_again(tmp_path: Path) -> None:
    root, first = _failed_repo(tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(WORKING))
    done = cli(root, "implement", "006", "--answer", f"failed-{SIGN}=retry")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()
    assert (root / "src" / "sign.py").read_text() == "x = 1\n"
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert row["state"] == "done", row


def test_aborting_a_failed_task_stops_the_run_until_answered(tmp_path: Path) -> None:
    root, first = _failed_repo(tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    aborted = cli(root, "implement", "006", "--answer", f"failed-{SIGN}=abort_process")
    said = aborted.stdout + aborted.stderr
    assert aborted.returncode == 4, said
    assert f"phasegate answer 006 failed-aborted-{SIGN} retry" in said, said
    assert "accept_as_is" not in said, said  # a failed task has no work to accept
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(WORKING))
    done = cli(root, "implement", "006", "--answer", f"failed-aborted-{SIGN}=retry")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()


def test_an_implementer_answering_blocked_is_not_reviewed_but_asked_about(tmp_path: Path) -> None:
    script = {
        "the-developer": {
            "implement": [{"text": "**BLOCKED:** the signing key's format is not specified"}]
        },
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script, plan=ONE_TASK)
    first = cli(root, "implement", "006")
    said = first.stdout + first.stderr
    assert first.returncode == 3, said
    assert (
        f"blocked-{SIGN}: Task 'Sign outgoing payloads' (docs/specs/006-webhooks/PLAN.md:5) is "
        "blocked: the-developer answered BLOCKED: the signing key's format is not specified. "
        "Retry it, skip it with a warning, or abort?"
    ) in said, said
    calls = (root / ".phasegate" / "calls.jsonl").read_text().splitlines()
    assert len(calls) == 1, calls  # no reviewer was asked

    answered = cli(root, "answer", "006", f"blocked-{SIGN}", "skip_with_warning")
    assert answered.returncode == 0, answered.stderr
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stdout + done.stderr
    plan = (root / PLAN).read_text()
    assert "the signing key's format is not specified" in plan, plan
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert row["state"] == "skipped", row


def test_a_failed_task_ticked_by_hand_is_done(tmp_path: Path) -> None:
    root, first = _failed_repo(tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    plan = root / PLAN
    plan.write_text(plan.read_text().replace("- [ ] **Sign", "- [x] **Sign"))
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _dispatched(root) == 2  # its agent is not called again
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert row["state"] == "ticked by hand", row


def test_a_blocked_agent_ticking_its_own_task_does_not_get_it_done(tmp_path: Path) -> None:
    ticked = ONE_TASK.replace("- [ ] **Sign", "- [x] **Sign")
    script = {
        "the-developer": {
            "implement": [{"write": {PLAN: ticked}, "text": "BLOCKED: no key to sign with"}]
        },
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script, plan=ONE_TASK)
    first = cli(root, "implement", "006")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "- [ ] **Sign outgoing payloads**" in (root / PLAN).read_text()
    again = cli(root, "implement", "006")
    assert again.returncode == 3, again.stdout + again.stderr
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert row["state"] == "agent blocked", row


def test_a_parallel_task_whose_agent_failed_stops_only_itself(tmp_path: Path) -> None:
    plan = """# Plan: P

## Phase 1: Both
**Execution: Parallel**

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Count requests** [`agent: the-data-engineer`]
"""
    script = {
        "the-developer": FAILING["the-developer"],
        "the-data-engineer": {"implement": [{"write": {"src/count.py": "y = 2\n"}}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script, plan=plan)
    first = cli(root, "implement", "006")
    assert first.returncode == 3, first.stdout + first.stderr
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert [r["state"] for r in rows] == ["agent failed", "approved, waiting to merge"], rows
    done = cli(root, "implement", "006", "--answer", f"failed-{SIGN}=skip_with_warning")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "src" / "count.py").read_text() == "y = 2\n"
    assert "⚠️ Skipped with warning" in (root / PLAN).read_text()
