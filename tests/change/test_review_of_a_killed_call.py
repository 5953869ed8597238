"""A run killed during the reviewer's call, after `create_review` wrote REVIEW.md: the
resumed run reads that review (see test_review_submitted_before_a_kill.py), never
filing it as `REVIEW.unrecorded.md`, the name of a hand edit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

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


def test_the_review_of_a_killed_call_is_not_taken_for_a_hand_edit(
    repo: Path, tmp_path: Path
) -> None:
    call = {"server": "phasegate", "tool": "create_review", "arguments": REVIEW}
    configure(repo, tmp_path, script([call]))
    planned = run_cli(repo, "plan", "oauth", "Add OAuth")
    assert planned.returncode == 0, planned.stderr
    folder = repo / "changes/oauth"
    # The 2nd call of impl is the reviewer's (one group of tasks, then the review).
    killed = _phasegate(repo, "impl", "oauth", crash_at="dispatch.after_call@2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    first = read_review(folder / "REVIEW.md")
    assert first is not None and first.round == "1.1"
    resumed = _phasegate(repo, "impl", "oauth")
    assert resumed.returncode == 0, resumed.stderr
    assert read_review(folder / "REVIEW.md") == first
    assert not (folder / "reviews" / "REVIEW.unrecorded.md").exists()
