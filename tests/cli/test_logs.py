"""``phasegate logs ITEM [-f] [--json]``: the journal as readable lines, followed live."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import (
    ITEM,
    approving_script,
    new_repo,
    phasegate,
    write_script,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return new_repo(tmp_path / "repo")


def test_logs_prints_time_phase_role_backend_what_happened_and_tokens(repo: Path) -> None:
    """Readable lines: time, phase, role and backend, what happened, tokens; issues below."""
    assert phasegate(repo, "run", ITEM, "--until", "specify").returncode == 0
    result = phasegate(repo, "logs", ITEM)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    finished = next(
        line for line in lines if "chain-reviewer (scripted)" in line and "finished" in line
    )
    fields = finished.split()
    assert fields[0].count("-") == 2 and fields[1].endswith("Z")  # date and time
    assert fields[2] == "brainstorm"
    assert "finished in" in finished and "tokens)" in finished
    assert any("iteration 1: not approved (1 blocker(s)): Criteria missing" in x for x in lines)
    assert any("[blocker] No acceptance criteria" in x for x in lines)
    assert "\x1b" not in result.stdout  # a pipe gets no escape codes


def test_logs_json_passes_the_journal_events_through(repo: Path) -> None:
    """--json prints the journal's events as recorded, one a line."""
    assert phasegate(repo, "run", ITEM, "--until", "brainstorm").returncode == 0
    result = phasegate(repo, "logs", ITEM, "--json")
    journal = (repo / "docs/features" / ITEM / ".journal.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        json.loads(line) for line in journal
    ]


def test_logs_of_an_unknown_item_is_bad_input(repo: Path) -> None:
    """An unknown item is exit 2, as a line or (with --json) as a JSON object."""
    result = phasegate(repo, "logs", "ghost")
    assert result.returncode == 2 and "no work item named 'ghost'" in result.stderr
    as_json = phasegate(repo, "logs", "ghost", "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stderr)["exit_code"] == 2


def _lines(stream: object) -> queue.Queue[str]:
    found: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            found.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return found


def _next_line_with(lines: queue.Queue[str], text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        if text in line:
            return line


def test_logs_follow_prints_a_run_in_another_process_as_it_happens(repo: Path) -> None:
    """Like `tail -f`: events appear while the run is still going; Ctrl-C ends it quietly
    (exit code 130)."""
    script = approving_script()
    script["chain-reviewer"] = {"*": [{"verdict": {"approved": True, "summary": "ok"}, "sleep": 2}]}
    write_script(repo, script)
    follower = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "logs", ITEM, "-f"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run = None
    try:
        assert follower.stdout is not None
        lines = _lines(follower.stdout)
        _next_line_with(lines, "created (workflow feature")
        run = subprocess.Popen(
            [sys.executable, "-m", "phasegate", "run", ITEM, "--until", "brainstorm"],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        waiting = _next_line_with(lines, "chain-reviewer (scripted)")
        assert "dispatched (iteration 1, review)" in waiting
        assert run.poll() is None  # printed while the reviewer is still at work
        _next_line_with(lines, "iteration 1: approved: ok")
        _next_line_with(lines, "completed after 1 iteration")
        assert run.wait(timeout=30) == 0
        follower.send_signal(signal.SIGINT)
        assert follower.wait(timeout=10) == 130  # as every command Ctrl-C stops
        assert follower.stderr is not None and follower.stderr.read() == ""
    finally:
        for proc in (follower, run):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def _following(repo: Path, *args: str) -> subprocess.Popen[str]:
    """``phasegate logs ITEM -f --json`` (with ``args``) running, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "phasegate", "logs", ITEM, *args, "-f", "--json"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def test_logs_follow_json_writes_one_event_a_line_as_they_come(repo: Path) -> None:
    """-f --json streams the events as JSON Lines while a run appends them."""
    follower = _following(repo)
    try:
        lines = _lines(follower.stdout)
        assert json.loads(_next_line_with(lines, "item.created"))["item"] == ITEM
        assert phasegate(repo, "run", ITEM, "--until", "brainstorm").returncode == 0
        completed = json.loads(_next_line_with(lines, "phase.completed"))
        assert completed["phase"] == "brainstorm" and completed["review"] == "approved"
    finally:
        follower.kill()
        follower.wait()


@pytest.fixture
def named_alike(repo: Path) -> Path:
    """``ITEM`` in the feature workflow and an item of the same name in review-loop."""
    assert phasegate(repo, "init", "--example", "review-loop").returncode == 0
    created = phasegate(repo, "new", ITEM, "--workflow", "review-loop", "-d", "the other one")
    assert created.returncode == 0, created.stderr
    return repo


def test_logs_picks_the_workflow_of_a_name_two_workflows_have(named_alike: Path) -> None:
    """Like status, run and answer, logs takes --workflow (-w) to pick one of two items
    of the same name; without it the name is bad input (exit 2) that says so."""
    ambiguous = phasegate(named_alike, "logs", ITEM)
    assert ambiguous.returncode == 2 and "pick one with --workflow" in ambiguous.stderr
    feature = phasegate(named_alike, "logs", ITEM, "--workflow", "feature")
    assert feature.returncode == 0, feature.stderr
    assert "created (workflow feature" in feature.stdout
    assert "review-loop" not in feature.stdout
    other = phasegate(named_alike, "logs", ITEM, "-w", "review-loop", "--json")
    assert other.returncode == 0, other.stderr
    events = [json.loads(line) for line in other.stdout.splitlines()]
    assert [(e["event"], e["workflow"]) for e in events] == [("item.created", "review-loop")]
    unknown = phasegate(named_alike, "logs", ITEM, "-w", "nope")
    assert unknown.returncode == 2 and "unknown workflow 'nope'" in unknown.stderr


def test_logs_follow_with_a_workflow_follows_that_item(named_alike: Path) -> None:
    """-f with --workflow follows the item of that workflow while a run appends to it."""
    follower = _following(named_alike, "-w", "feature")
    try:
        lines = _lines(follower.stdout)
        assert json.loads(_next_line_with(lines, "item.created"))["workflow"] == "feature"
        ran = phasegate(named_alike, "run", ITEM, "-w", "feature", "--until", "brainstorm")
        assert ran.returncode == 0, ran.stderr
        completed = json.loads(_next_line_with(lines, "phase.completed"))
        assert completed["phase"] == "brainstorm" and completed["item"] == ITEM
    finally:
        follower.kill()
        follower.wait()
