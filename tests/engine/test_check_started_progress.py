"""A check says it runs as it starts: a progress line, and a ``check.started`` journal
event written before its command runs (``phasegate logs`` reads it)."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import init_repo

from cli_process import run_cli

CONFIG = """\
version: 1
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
"""

# The command passes only if its start was journaled before it ran.
WORKFLOW = """\
name: gate
items_dir: work
modes:
  standard: {max_iterations: 1}
roles:
  worker: {access: write}
nodes:
  - id: checks
    kind: check
    run:
      - name: suite
        run: "grep -q '\\"check.started\\"' work/s/.journal.jsonl"
    on: {pass: done, fail: broken}
  - id: done
    kind: end
  - id: broken
    kind: end
    status: blocked
    message: the checks did not pass
"""


def test_a_running_check_is_shown_and_journaled_before_it_ends(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    (root / ".phasegate" / "workflows").mkdir(parents=True)
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text("{}\n")
    (root / ".phasegate" / "workflows" / "gate.yaml").write_text(WORKFLOW)
    assert run_cli(root, "new", "s", "--workflow", "gate", "--description", "x").returncode == 0
    ran = run_cli(root, "run", "s")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stderr.splitlines()
    started = "  running check suite: grep -q '\"check.started\"' work/s/.journal.jsonl"
    assert started in lines, ran.stderr
    assert lines.index(started) < lines.index("  ✓ check suite passed"), ran.stderr
    logs = run_cli(root, "logs", "s")
    assert logs.returncode == 0, logs.stderr
    assert "check suite started: grep -q" in logs.stdout, logs.stdout
