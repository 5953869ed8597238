"""A check killed by ``timeouts.check`` is reported as timed out, after how many
seconds, in the run's progress, the journal and the issue fed onwards: not as a
failure with the exit status of the signal that killed it."""

from __future__ import annotations

import json
from pathlib import Path

from check_gate import SCRIPTED_CONFIG, check_gate_repo

from cli_process import run_cli as _cli

CONFIG = SCRIPTED_CONFIG + "timeouts:\n  check: 1\n"


def test_a_check_that_runs_out_of_time_says_so(tmp_path: Path) -> None:
    commands = ['{name: slow, run: "sleep 30"}']
    root = check_gate_repo(tmp_path / "repo", "slowcheck", commands, config=CONFIG)
    done = _cli(root, "run", "s")
    assert done.returncode == 4, done.stdout + done.stderr
    shown = done.stdout + done.stderr
    assert "✗ check slow timed out after 1s" in shown, shown
    assert "exit -" not in shown, shown
    journal = (root / "work" / "s" / ".journal.jsonl").read_text().splitlines()
    finished = [json.loads(line) for line in journal if '"check.finished"' in line]
    assert [(e["timed_out"], e["timeout_s"]) for e in finished] == [(True, 1.0)]
    state = (root / "work" / "s" / ".engine.json").read_text()
    assert "check 'slow' (sleep 30) timed out after 1s" in state
