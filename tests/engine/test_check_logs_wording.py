"""``phasegate logs`` says why a check failed as the run's progress does: a command that
could not start is not a failure with ``exit None``, and exit code 127 is named; a check
whose working folder is missing never shows as started."""

from __future__ import annotations

from pathlib import Path

from check_gate import check_gate_repo

from cli_process import run_cli


def test_logs_name_why_each_check_failed(tmp_path: Path) -> None:
    commands = [
        '{name: nowhere, run: "true", cwd: missing}',
        '{name: gone, run: "no-such-tool-phasegate-test"}',
    ]
    root = check_gate_repo(tmp_path / "repo", "gate", commands)
    ran = run_cli(root, "run", "s")
    assert ran.returncode == 4, ran.stdout + ran.stderr
    assert "running check nowhere" not in ran.stderr
    logs = run_cli(root, "logs", "s")
    assert logs.returncode == 0, logs.stderr
    shown = logs.stdout
    assert "exit None" not in shown, shown
    assert "check nowhere could not run: its working directory 'missing' does not exist" in shown, (
        shown
    )
    assert "check nowhere started" not in shown, shown
    assert "check gone started: no-such-tool-phasegate-test" in shown, shown
    assert "check gone failed (exit 127: command not found)" in shown, shown
