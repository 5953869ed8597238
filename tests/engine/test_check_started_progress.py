"""A check says it runs as it starts: a progress line, and a ``check.started`` journal
event written before its command runs (``phasegate logs`` reads it)."""

from __future__ import annotations

from pathlib import Path

from check_gate import check_gate_repo

from cli_process import run_cli


def test_a_running_check_is_shown_and_journaled_before_it_ends(tmp_path: Path) -> None:
    # The command passes only if its start was journaled before it ran.
    suite = '{name: suite, run: "grep -q \'\\"check.started\\"\' work/s/.journal.jsonl"}'
    root = check_gate_repo(tmp_path / "repo", "gate", [suite])
    ran = run_cli(root, "run", "s")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stderr.splitlines()
    started = "  running check suite: grep -q '\"check.started\"' work/s/.journal.jsonl"
    assert started in lines, ran.stderr
    assert lines.index(started) < lines.index("  ✓ check suite passed"), ran.stderr
    logs = run_cli(root, "logs", "s")
    assert logs.returncode == 0, logs.stderr
    assert "check suite started: grep -q" in logs.stdout, logs.stdout
