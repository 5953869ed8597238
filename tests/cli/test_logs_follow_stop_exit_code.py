"""``phasegate logs NAME -f`` stopped by a signal ends as every command a signal stops
does, and as ``tail -f`` does: 128 + the signal (130 for Ctrl-C, 143 for SIGTERM), with
no line on stderr (nothing was started, nothing is left to resume)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, new_repo


def _follow_then(repo: Path, signum: int) -> tuple[int, str]:
    follower = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "logs", ITEM, "-f"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert follower.stdout is not None
        assert "created (workflow feature" in follower.stdout.readline()
        time.sleep(0.5)  # following now
        follower.send_signal(signum)
        code = follower.wait(timeout=20)
        assert follower.stderr is not None
        return code, follower.stderr.read()
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_logs_follow_stopped_by_a_signal_exits_128_plus_it(
    tmp_path: Path, signum: int, code: int
) -> None:
    repo = new_repo(tmp_path / "repo")
    ended, stderr = _follow_then(repo, signum)
    assert ended == code, stderr
    assert stderr == ""
