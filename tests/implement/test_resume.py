"""Resume (seed 004: Recovery Strategy): killed during a review cycle, a run continues at
that cycle, never dispatches a call whose answer is recorded, and reads the checkboxes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, cli, cycles_file, journal, key, make_repo
from test_implement_cli import SCRIPTED

pytestmark = pytest.mark.slow

PLAN_TEXT = """# Plan

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`] [`review_focus: security`]
  - HMAC over the raw body

- [ ] **Rotate the signing secret** [`agent: the-developer`] [`review: false`]
"""
SIGN = key("Sign outgoing payloads")
ROTATE = key("Rotate the signing secret")


def repo_with(tmp_path: Path, review_sleep: float = 0.0) -> Path:
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=SCRIPTED)
    script: dict[str, Any] = {
        "the-developer": {
            "implement:" + SIGN: [
                {"write": {"src/sign.py": "v = 1\n"}, "text": "first"},
                {"write": {"src/sign.py": "import hmac\nv = 2\n"}, "text": "second"},
            ],
            "implement:" + ROTATE: [{"write": {"src/rotate.py": "x = 1\n"}}],
        },
        "the-security-engineer": {
            "implement": [
                {"text": "NEEDS_REVISION\nCompare signatures in constant time."},
                {"text": "APPROVED", "sleep": review_sleep},
            ]
        },
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    return root


def dispatched(root: Path) -> Counter[tuple[str, int]]:
    """Real calls made to each agent, by (role, cycle), across every process."""
    lines = (root / ".phasegate" / "calls.jsonl").read_text().splitlines()
    return Counter((json.loads(x)["role"], int(json.loads(x)["iteration"])) for x in lines)


def reached_agent(root: Path, role: str, cycle: int) -> bool:
    """Whether the agent's own log has a call of ``role`` in ``cycle`` (a line being written
    is skipped)."""
    for line in (root / ".phasegate" / "calls.jsonl").read_text().splitlines():
        try:
            call = json.loads(line)
        except json.JSONDecodeError:
            continue
        if call["role"] == role and int(call["iteration"]) == cycle:
            return True
    return False


def test_a_crash_after_a_review_answered_reuses_its_answer(tmp_path: Path) -> None:
    """Killed (SIGKILL) right after cycle 2's review was journaled: the rerun takes that
    answer from the journal and dispatches no call a second time."""
    root = repo_with(tmp_path)
    crashed = cli(root, "implement", "006", env={"PHASEGATE_CRASH_AT": "agent.returned@4"})
    assert crashed.returncode == -signal.SIGKILL
    resumed = cli(root, "implement", "006")
    assert resumed.returncode == 0, resumed.stderr
    assert dispatched(root) == Counter(
        {
            ("the-developer", 1): 2,  # one for each task
            ("the-security-engineer", 1): 1,
            ("the-developer", 2): 1,
            ("the-security-engineer", 2): 1,
        }
    )
    assert any(e["event"] == "agent.recovered" for e in journal(root))
    reviews = cycles_file(root)["sessions"]["006"]["tasks"][SIGN]["reviewers"]
    assert [(r["cycle"], r["status"]) for r in reviews] == [(1, "NEEDS_REVISION"), (2, "APPROVED")]


def test_kill_9_during_a_review_resumes_at_that_cycle(tmp_path: Path) -> None:
    """kill -9 while cycle 2's reviewer works: status shows the task interrupted in review
    (cycle 2/3); the rerun starts with that review, and nothing before it is dispatched
    again."""
    root = repo_with(tmp_path, review_sleep=30)
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "implement", "006"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        # Every step committed, as it is with agents slower than the group-commit window.
        env={**os.environ, "PHASEGATE_COALESCE_SECONDS": "0"},
    )
    log = root / ".phasegate" / "implement" / "006" / ".journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        events = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        dispatched_it = any(
            e["event"] == "agent.dispatched" and e["stage"] == "review" and e["iteration"] == 2
            for e in events
        )
        # Killed once the reviewer has the call (its own log has it), not between the
        # journal's record of the dispatch and the call reaching the agent.
        if dispatched_it and reached_agent(root, "the-security-engineer", 2):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the second review was never dispatched")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)

    status = json.loads(cli(root, "status", "006", "--json").stdout)
    row = status["tasks"][0]
    assert (row["state"], row["was"], row["cycle"], row["maxCycles"]) == (
        "interrupted",
        "in review",
        2,
        3,
    )
    assert row["reviewer"] == "the-security-engineer" and "security" in row["focus"]
    pending = cycles_file(root)["sessions"]["006"]["tasks"][SIGN]["reviewers"][-1]
    assert (pending["cycle"], pending["status"]) == (2, "pending")

    script = json.loads((root / ".phasegate" / "agents.yaml").read_text())
    script["the-security-engineer"]["implement"][1]["sleep"] = 0
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    before = len(log.read_text().splitlines())
    resumed = cli(root, "implement", "006")
    assert resumed.returncode == 0, resumed.stderr
    new_events = [json.loads(x) for x in log.read_text().splitlines()[before:]]
    first = next(e for e in new_events if e["event"] == "agent.dispatched")
    assert (first["role"], first["stage"], first["iteration"]) == (
        "the-security-engineer",
        "review",
        2,
    )
    calls = dispatched(root)
    assert calls[("the-developer", 2)] == 1 and calls[("the-security-engineer", 1)] == 1
    assert calls[("the-security-engineer", 2)] == 2  # the killed attempt, and its rerun
    reviews = cycles_file(root)["sessions"]["006"]["tasks"][SIGN]["reviewers"]
    assert [(r["cycle"], r["status"]) for r in reviews] == [(1, "NEEDS_REVISION"), (2, "APPROVED")]


def test_tasks_ticked_by_hand_are_not_done_again(tmp_path: Path) -> None:
    """On restart PLAN.md's checkboxes are read: a task a person ticked meanwhile is done."""
    root = repo_with(tmp_path)
    script = json.loads((root / ".phasegate" / "agents.yaml").read_text())
    script["the-security-engineer"]["implement"] = [{"text": "NEEDS_REVISION\nNo."}]
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    first = cli(root, "implement", "006", env={"PHASEGATE_CRASH_AT": "agent.returned@1"})
    assert first.returncode == -signal.SIGKILL
    plan = root / PLAN
    text = plan.read_text()
    plan.write_text(text.replace("- [ ] **Rotate", "- [x] **Rotate"))
    script["the-security-engineer"]["implement"] = [{"text": "APPROVED"}]
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    assert cli(root, "implement", "006").returncode == 0
    rotate_calls = [
        e
        for e in journal(root)
        if e["event"] == "agent.dispatched" and e["path"].endswith(f"tasks[{ROTATE}]/implement")
    ]
    assert rotate_calls == []


def test_a_crash_after_a_review_timed_out_does_not_dispatch_it_again(tmp_path: Path) -> None:
    """A timed-out review is journaled as the call's result: killed right after it, the rerun
    takes the default action without asking the reviewer again."""
    root = make_repo(
        tmp_path / "repo",
        PLAN_TEXT,
        config={
            **SCRIPTED,
            "workflows": {"implement": {"settings": {"review_timeout_minutes": 0.005}}},
        },
    )
    script = {
        "the-developer": {"implement": [{"write": {"src/x.py": "x = 1\n"}}]},
        "the-security-engineer": {"implement": [{"sleep": 3, "text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    crashed = cli(root, "implement", "006", env={"PHASEGATE_CRASH_AT": "agent.returned@2"})
    assert crashed.returncode == -signal.SIGKILL
    assert cli(root, "implement", "006").returncode == 0
    calls = dispatched(root)
    assert calls[("the-security-engineer", 1)] == 1
    assert calls[("the-developer", 1)] == 2  # the first task, then the second
    recovered = [e for e in journal(root) if e["event"] == "agent.recovered"]
    assert "the-security-engineer" in [e["role"] for e in recovered]
    assert "⚠️ Skipped with warning (phasegate): the review timed out" in (root / PLAN).read_text()
