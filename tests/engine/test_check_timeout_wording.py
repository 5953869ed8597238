"""A check killed by ``timeouts.check`` is reported as timed out, after how many
seconds, in the run's progress, the journal and the issue fed onwards: not as a
failure with the exit status of the signal that killed it."""

from __future__ import annotations

import json
from pathlib import Path

from engine_helpers import init_repo

from cli_process import run_cli as _cli

CONFIG = """\
version: 1
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
timeouts:
  check: 1
"""

WORKFLOW = """\
name: slowcheck
items_dir: work
modes:
  standard: {max_iterations: 1}
roles:
  worker: {access: write}
nodes:
  - id: checks
    kind: check
    run: [{name: slow, run: "sleep 30"}]
    on: {pass: done, fail: broken}
  - id: done
    kind: end
  - id: broken
    kind: end
    status: blocked
    message: the checks did not pass
"""


def test_a_check_that_runs_out_of_time_says_so(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    (root / ".phasegate" / "workflows").mkdir(parents=True)
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text("{}\n")
    (root / ".phasegate" / "workflows" / "slowcheck.yaml").write_text(WORKFLOW)
    assert _cli(root, "new", "s", "--workflow", "slowcheck", "--description", "x").returncode == 0
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
