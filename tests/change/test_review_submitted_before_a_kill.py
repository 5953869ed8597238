"""A run killed during the reviewer's call after `create_review` recorded its review: the
resumed run reads that review instead of paying for the call again, and `logs` says why.
A run killed before the review was submitted asks the reviewer again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_change_scripted_review import REVIEW, configure, script

from cli_process import run_cli
from phasegate.change import read_review


def _phasegate(
    repo: Path, *args: str, crash_at: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    if crash_at is not None:
        env["PHASEGATE_CRASH_AT"] = crash_at
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        env=env,
    )


def _journal(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _reviewer_calls(folder: Path) -> int:
    return sum(
        1
        for e in _journal(folder)
        if e["event"] == "agent.dispatched" and e.get("role") == "reviewer"
    )


def _planned(repo: Path, tmp_path: Path) -> Path:
    call = {"server": "phasegate", "tool": "create_review", "arguments": REVIEW}
    configure(repo, tmp_path, script([call]))
    planned = run_cli(repo, "plan", "oauth", "Add OAuth")
    assert planned.returncode == 0, planned.stderr
    return repo / "changes/oauth"


def test_a_review_submitted_before_the_kill_is_read_not_asked_again(
    repo: Path, tmp_path: Path
) -> None:
    folder = _planned(repo, tmp_path)
    # The 2nd call of impl is the reviewer's (one group of tasks, then the review).
    killed = _phasegate(repo, "impl", "oauth", crash_at="dispatch.after_call@2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    first = read_review(folder / "REVIEW.md")
    assert first is not None and first.round == "1.1"
    resumed = _phasegate(repo, "impl", "oauth")
    assert resumed.returncode == 0, resumed.stderr
    assert _reviewer_calls(folder) == 1
    assert read_review(folder / "REVIEW.md") == first
    assert not (folder / "reviews").exists() or not any((folder / "reviews").iterdir())
    assert "phase: complete" in (folder / "STATE.yaml").read_text()
    (recovered,) = [e for e in _journal(folder) if e["event"] == "agent.recovered"]
    assert recovered["role"] == "reviewer"
    assert "create_review recorded its review of round 1.1" in recovered["reason"]
    logs = run_cli(repo, "logs", "oauth")
    assert logs.returncode == 0, logs.stderr
    assert "create_review recorded its review of round 1.1" in logs.stdout, logs.stdout


def test_a_call_killed_before_its_review_is_asked_again(repo: Path, tmp_path: Path) -> None:
    folder = _planned(repo, tmp_path)
    killed = _phasegate(repo, "impl", "oauth", crash_at="dispatch.before_call@2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not (folder / "REVIEW.md").exists()
    resumed = _phasegate(repo, "impl", "oauth")
    assert resumed.returncode == 0, resumed.stderr
    assert _reviewer_calls(folder) == 2
    assert not [e for e in _journal(folder) if e["event"] == "agent.recovered"]
    assert "phase: complete" in (folder / "STATE.yaml").read_text()
