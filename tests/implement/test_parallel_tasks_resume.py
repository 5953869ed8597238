"""``phasegate implement`` with parallel tasks, as a person runs it (seed 004: Parallel
Execution; Recovery Strategy): killed with SIGKILL while one parallel task works and the
other is done, the rerun finishes the phase without doing the finished task again; and
``--jobs 1`` runs the tasks one after another in the work tree."""

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
from implement_helpers import PLAN, cli, git, journal, key, make_repo
from test_implement_cli import SCRIPTED

pytestmark = pytest.mark.slow

PLAN_TEXT = """# Plan

## Phase 1: Delivery
**Execution: Parallel**

- [ ] **Write the retry code** [`agent: the-developer`] [`review: false`]
- [ ] **Document the headers** [`agent: the-technical-writer`] [`review: false`]
- [ ] **Add delivery metrics** [`agent: the-developer`] [`review: false`] [`parallel: false`]
"""
RETRY = key("Write the retry code")
HEADERS = key("Document the headers")
METRICS = key("Add delivery metrics")


def repo_with(tmp_path: Path, headers_sleep: float) -> Path:
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=SCRIPTED)
    write_script(root, headers_sleep)
    return root


def write_script(root: Path, headers_sleep: float) -> None:
    script: dict[str, Any] = {
        "the-developer": {
            f"implement:{RETRY}": [{"write": {"src/retry.py": "retries = 3\n"}}],
            f"implement:{METRICS}": [{"write": {"src/metrics.py": "counted = True\n"}}],
        },
        "the-technical-writer": {
            f"implement:{HEADERS}": [
                {"sleep": headers_sleep, "write": {"docs/headers.md": "# Headers\n"}}
            ]
        },
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))


def dispatched(root: Path) -> Counter[str]:
    """Agent calls dispatched for each task, across every run."""
    return Counter(
        e["path"].split("tasks[", 1)[1].split("]", 1)[0]
        for e in journal(root)
        if e["event"] == "agent.dispatched"
    )


def test_kill_9_mid_phase_resumes_without_repeating_the_finished_task(tmp_path: Path) -> None:
    """SIGKILL while one parallel task's agent works and the other task is approved: the
    rerun implements only the unfinished task, then the task waiting for both; PLAN.md ends
    all ticked, every task's work is in the work tree and no worktree is left."""
    root = repo_with(tmp_path, headers_sleep=60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "implement", "006"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    log = root / ".phasegate" / "implement" / "006" / ".journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        events = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        # Approved: its tick waits for the phase's work to reach the work tree.
        ticked = {e["task"] for e in events if e["event"] == "implement.tick_waiting"}
        if RETRY in ticked and dispatched(root)[HEADERS] == 1:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the first parallel task never finished while the second worked")
    # While the other agent works, the state file (and so status) catches up at once.
    states: dict[str, str] = {}
    # Approved, its box in PLAN.md waits for the phase's merged work: status says so.
    while time.monotonic() < deadline and states.get(RETRY) != "approved, waiting to merge":
        status = json.loads(cli(root, "status", "006", "--json").stdout)
        states = {row["key"]: row["state"] for row in status["tasks"]}
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert states == {
        RETRY: "approved, waiting to merge",
        HEADERS: "implementing",
        METRICS: "pending",
    }
    assert "- [ ] **Write the retry code**" in (root / PLAN).read_text()
    # Killed: the task its agent worked on is interrupted, not still implementing.
    after = json.loads(cli(root, "status", "006", "--json").stdout)
    assert {row["key"]: row["state"] for row in after["tasks"]}[HEADERS] == "interrupted"
    assert after["nextCommand"] == "phasegate implement 006"
    sessions = json.loads((root / ".the-startup" / "review-cycles.json").read_text())
    assert sessions["sessions"]["006"]["tasks"][RETRY]["implementer"] == "the-developer"

    write_script(root, headers_sleep=0)
    resumed = cli(root, "implement", "006")
    assert resumed.returncode == 0, resumed.stderr
    assert dispatched(root) == Counter({RETRY: 1, HEADERS: 2, METRICS: 1})
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")
    assert (root / "src" / "retry.py").read_text() == "retries = 3\n"
    assert (root / "docs" / "headers.md").read_text() == "# Headers\n"
    assert (root / "src" / "metrics.py").read_text() == "counted = True\n"
    assert "worktree " + str(root / ".phasegate" / "worktrees") not in git(
        root, "worktree", "list", "--porcelain"
    )


def test_implement_jobs_1_runs_the_parallel_tasks_one_after_another_in_the_work_tree(
    tmp_path: Path,
) -> None:
    """``phasegate implement 006 --jobs 1``: no fan-out, no worktree; the tasks run in plan
    order in the work tree; the plan ends all ticked."""
    root = repo_with(tmp_path, headers_sleep=0)
    done = cli(root, "implement", "006", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    events = journal(root)
    assert not [e for e in events if e["event"].startswith("fanout.")]
    order = [
        e["path"].split("tasks[", 1)[1].split("]", 1)[0]
        for e in events
        if e["event"] == "agent.dispatched"
    ]
    assert order == [RETRY, HEADERS, METRICS]
    assert not (root / ".phasegate" / "worktrees").exists()
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")
    assert (root / "docs" / "headers.md").read_text() == "# Headers\n"


def test_implement_runs_the_parallel_tasks_at_once_by_default(tmp_path: Path) -> None:
    """Without --jobs the phase's parallel tasks fan out (up to 3 at once) in worktrees."""
    root = repo_with(tmp_path, headers_sleep=0)
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stderr
    (started,) = [e for e in journal(root) if e["event"] == "fanout.started"]
    assert (started["jobs"], started["isolation"]) == (3, "worktree")
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")


def test_without_a_commit_to_branch_from_the_run_says_so_and_jobs_1_runs_it(
    tmp_path: Path,
) -> None:
    """A repository without any commit cannot give parallel tasks worktrees: the run stops
    with exit 2 saying to commit or use --jobs 1, and --jobs 1 then runs the plan."""
    root = repo_with(tmp_path, headers_sleep=0)
    git(root, "update-ref", "-d", "HEAD")
    refused = cli(root, "implement", "006")
    assert refused.returncode == 2, refused.stderr
    assert "has no commit to start them from: commit first (or run with --jobs 1" in (
        refused.stderr
    )
    done = cli(root, "implement", "006", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")
