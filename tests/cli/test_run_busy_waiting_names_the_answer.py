"""`phasegate run ITEM` while another run of ITEM waits for a person (`run --wait`): the
busy error (exit 7) says what that run waits for and the command that answers it, rather
than only "wait for it to finish", which it does not do until someone answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from test_hostile_text_and_answers import GATES, error_lines, phasegate, setup

from phasegate.errors import ExitCode


def test_a_run_refused_while_another_waits_names_the_answer_command(tmp_path: Path) -> None:
    repo = setup(tmp_path / "repo", "gates", GATES)
    assert phasegate(repo, "new", "g1", "-w", "gates").returncode == 0
    waiting = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", "g1", "--wait", "-q"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    try:
        deadline = time.monotonic() + 60
        while not json.loads(phasegate(repo, "decisions", "g1", "--json").stdout):
            assert time.monotonic() < deadline, "the run never asked"
            time.sleep(0.2)
        busy = phasegate(repo, "run", "g1", "-a", "go-g1=yes")
        assert busy.returncode == ExitCode.BUSY, busy.stderr
        (line,) = error_lines(busy.stderr)
        assert "is being run by another phasegate process" in line, line
        assert line.endswith(
            "; it waits for decision go-g1: answer it with phasegate answer g1 go-g1 yes"
        ), line
        assert phasegate(repo, "answer", "g1", "go-g1", "yes").returncode == 0
        assert waiting.wait(timeout=60) == 0
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
