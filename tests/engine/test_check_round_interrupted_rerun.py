"""A check round stopped with Ctrl-C: the next run runs its failed checks again.

A check that finished before the run died is not run again (its recorded outcome is
reused) when the run was killed. A person who stops a round with Ctrl-C, though, does
so to change something (install a missing tool, fix a file): a check that failed then
runs again on the next run, and one that passed is still reused.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from check_gate import check_gate_repo

from cli_process import run_cli


def test_a_failed_check_of_a_round_stopped_with_ctrl_c_runs_again(tmp_path: Path) -> None:
    mark, log = tmp_path / "second-started", tmp_path / "ran.log"
    commands = [
        f'{{name: first, run: "echo first >> {log}; test -f ok.txt"}}',
        f'{{name: second, run: "echo second >> {log}; touch {mark}; sleep 30"}}',
    ]
    root = check_gate_repo(tmp_path / "repo", "gate", commands)
    running = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", "s"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not mark.exists():
        assert time.monotonic() < deadline, "the second check never started"
        time.sleep(0.1)
    os.killpg(running.pid, signal.SIGINT)  # Ctrl-C reaches the terminal's process group
    _, stderr = running.communicate(timeout=60)
    assert running.returncode not in (0, None), stderr
    # The person puts in place what the failed check wanted, and runs again.
    (root / "ok.txt").write_text("ok\n")
    mark.unlink()
    second = [c.replace("sleep 30", "true") for c in commands]
    workflow = root / ".phasegate" / "workflows" / "gate.yaml"
    workflow.write_text(workflow.read_text().replace(commands[1], second[1]))
    resumed = run_cli(root, "run", "s")
    assert log.read_text().split() == ["first", "second", "first", "second"], resumed.stderr
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
