"""``phasegate logs NAME -f`` ends (exit 0, one line on stderr saying so) once the item
has ended (completed or stopped) and no run of it goes on: nothing more is journaled.
An item that waits for a person's decision is followed on, and a follower started while
the item waited ends once the run that ended the item ends.

End to end: the shipped ``review-loop`` example, its critic rejecting the plan, so the
run stops at the ``plan-rejected`` gate; ``drop`` stops the item."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from review_loop_helpers import DECISION, ITEM, make_repo, script, words


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def follow(repo: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "phasegate", "logs", ITEM, "-f"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_logs_follow_ends_once_the_item_has_ended_and_no_run_goes_on(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    assert cli(repo, "run", ITEM).returncode == 3  # waits at the gate
    follower = follow(repo)
    try:
        time.sleep(2)
        assert follower.poll() is None  # a decision waits: followed on
        assert cli(repo, "answer", ITEM, DECISION, "drop").returncode == 0
        ran = cli(repo, "run", ITEM)
        assert ran.returncode == 0, ran.stderr
        assert follower.wait(timeout=20) == 0
        assert follower.stdout is not None and follower.stderr is not None
        assert "complete: 1 phase completed" in follower.stdout.read()
        assert follower.stderr.read() == f"phasegate: {ITEM} has ended (stopped); no run goes on\n"
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    # Following an item that has ended prints its journal and ends at once.
    again = subprocess.run(
        [sys.executable, "-m", "phasegate", "logs", ITEM, "-f"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=20,
    )
    assert again.returncode == 0, again.stderr
    assert "complete: 1 phase completed" in again.stdout
    assert again.stderr == f"phasegate: {ITEM} has ended (stopped); no run goes on\n"
