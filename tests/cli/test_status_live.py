"""``phasegate status`` tells a run that is going on now from one that died: while a
run holds the item, the table, ``status NAME`` and ``--json`` say it is running (its
pid) and advise watching it; once it was killed (SIGKILL, nothing cleaned up),
nothing is shown running and ``run`` is advised to resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from dashboard_helpers import ITEM, approving_script, new_repo, phasegate, write_script
from parallel_helpers import fan_repo

from phasegate.dashboard.data import item_detail
from phasegate.integrations.claude_code.hook import session_context

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

FAN_ITEM = "fan-one"
TASKS = "# Tasks\n\n- [ ] T1: The bucket\n- [ ] T2: The clock\n- [ ] T3: The config\n"
SCRIPTED = (
    "version: 1\n"
    "roles:\n  default: {backend: scripted}\n"
    "backends:\n  scripted:\n    script: .phasegate/agents.yaml\n"
)


@contextmanager
def running(repo: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``phasegate run *args`` in the background, killed at the end if still running."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def wait_for(proc: subprocess.Popen[bytes], journal: Path, event: str, count: int = 1) -> None:
    """Wait until ``journal`` holds ``count`` events ``event`` (the run still going)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it got there"
        if journal.exists():
            lines = journal.read_text().splitlines()
            if sum(1 for line in lines if json.loads(line).get("event") == event) >= count:
                return
        time.sleep(0.05)
    raise AssertionError(f"no {count} {event} in {journal}")


def kill_hard(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def status_json(repo: Path, *args: str) -> Any:
    shown = phasegate(repo, "status", *args, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def table_row(repo: Path, item: str) -> str:
    shown = phasegate(repo, "status")
    assert shown.returncode == 0, shown.stderr
    (row,) = [line for line in shown.stdout.splitlines() if line.split()[:1] == [item]]
    return row


def test_status_says_a_run_goes_on_and_advises_watching_it_not_running_again(
    tmp_path: Path,
) -> None:
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}, "sleep": 60}
    ]
    repo = new_repo(tmp_path / "repo", script)
    journal = repo / "docs" / "features" / ITEM / ".journal.jsonl"
    watch = f"phasegate logs {ITEM} -f"
    with running(repo, ITEM) as run:
        wait_for(run, journal, "agent.dispatched")

        row = table_row(repo, ITEM)
        assert f"running (pid {run.pid})" in row
        assert row.rstrip().endswith(watch)
        assert f"phasegate run {ITEM}" not in row

        detail = phasegate(repo, "status", ITEM)
        assert detail.returncode == 0, detail.stderr
        assert f"Running now: pid {run.pid} on " in detail.stdout
        assert f"Next: {watch}" in detail.stdout
        assert f"phasegate run {ITEM}" not in detail.stdout

        one = status_json(repo, ITEM)
        assert one["running"]["pid"] == run.pid
        assert one["running"]["host"] and one["running"]["since"]
        assert one["nextCommand"] == watch
        assert one["status"] == "active"
        (listed,) = status_json(repo)
        assert listed["running"] == one["running"] and listed["nextCommand"] == watch
        page = item_detail(repo, ITEM)  # what the dashboard serves for the item
        assert page["running"]["pid"] == run.pid and page["nextCommand"] == watch
        context = session_context({"cwd": str(repo)}, environ={})  # the SessionStart hook
        assert f"- Running now: pid {run.pid} on " in context
        assert f"- Next command: {watch}" in context

        # What status advises is what works: the run is taken, and the logs follow it.
        again = phasegate(repo, "run", ITEM)
        assert again.returncode == 7, again.stderr
        (line,) = again.stderr.strip().splitlines()
        assert f"pid {run.pid}" in line and line.endswith(f"(follow it with {watch})")
        assert run.poll() is None

        kill_hard(run)

    row = table_row(repo, ITEM)
    assert "running" not in row and " interrupted " in row
    assert row.rstrip().endswith(f"phasegate run {ITEM}")
    detail = phasegate(repo, "status", ITEM)
    assert "Running now" not in detail.stdout
    assert f"Next: phasegate run {ITEM}" in detail.stdout
    one = status_json(repo, ITEM)
    assert one["running"] is None and one["nextCommand"] == f"phasegate run {ITEM}"
    (listed,) = status_json(repo)
    assert listed["running"] is None
    context = session_context({"cwd": str(repo)}, environ={})
    assert "Running now" not in context and f"- Next command: phasegate run {ITEM}" in context
    page = item_detail(repo, ITEM)
    assert page["running"] is None and page["nextCommand"] == f"phasegate run {ITEM}"


def test_items_of_a_parallel_loop_killed_with_its_run_are_shown_interrupted(
    tmp_path: Path,
) -> None:
    repo = fan_repo(tmp_path / "repo", parallel=3, config=SCRIPTED)
    write_script(
        repo,
        {
            "planner": {"*": [{"write": {"{item_dir}/tasks.md": TASKS}}]},
            "coder": {"*": [{"write": {"src/{task}.py": "# {task}\n"}, "sleep": 60}]},
            "*": {"*": [{"verdict": {"approved": True, "summary": "ok", "issues": []}}]},
        },
    )
    created = phasegate(repo, "new", FAN_ITEM, "--workflow", "fan", "--description", "Fan")
    assert created.returncode == 0, created.stderr
    journal = repo / "work" / "fan" / FAN_ITEM / ".journal.jsonl"
    with running(repo, FAN_ITEM) as run:
        wait_for(run, journal, "agent.dispatched", count=4)  # the plan, then three tasks
        one = status_json(repo, FAN_ITEM)
        assert one["running"]["pid"] == run.pid
        (loop,) = [p for p in one["phases"] if p["node"] == "tasks"]
        assert [i["status"] for i in loop["items"]] == ["running"] * 3
        detail = phasegate(repo, "status", FAN_ITEM).stdout
        assert "3 running" in detail and f"Running now: pid {run.pid}" in detail
        kill_hard(run)

    one = status_json(repo, FAN_ITEM)
    assert one["running"] is None
    assert one["nextCommand"] == f"phasegate run {FAN_ITEM}"
    (loop,) = [p for p in one["phases"] if p["node"] == "tasks"]
    assert [i["status"] for i in loop["items"]] == ["interrupted"] * 3
    detail = phasegate(repo, "status", FAN_ITEM)
    assert detail.returncode == 0, detail.stderr
    assert "running" not in detail.stdout.lower()
    assert "3 interrupted" in detail.stdout
    assert "T1 The bucket — interrupted" in detail.stdout
    assert f"Next: phasegate run {FAN_ITEM}" in detail.stdout
    row = table_row(repo, FAN_ITEM)
    assert "running" not in row and row.rstrip().endswith(f"phasegate run {FAN_ITEM}")


def test_a_left_file_whose_pid_is_another_process_now_is_not_a_live_run(
    tmp_path: Path,
) -> None:
    """A run killed with SIGKILL leaves its file; a process given the same pid later
    (here: this test's own) is not taken for the run."""
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}, "sleep": 60}
    ]
    repo = new_repo(tmp_path / "repo", script)
    journal = repo / "docs" / "features" / ITEM / ".journal.jsonl"
    with running(repo, ITEM) as run:
        wait_for(run, journal, "agent.dispatched")
        kill_hard(run)
    (left,) = (repo / ".phasegate" / "locks").glob("*.run.json")
    data = json.loads(left.read_text())
    assert data["pid"] == run.pid
    left.write_text(json.dumps({**data, "pid": os.getpid()}))  # a live pid, started otherwise
    assert status_json(repo, ITEM)["running"] is None
    assert "running" not in table_row(repo, ITEM)
