"""A check command the system cannot start at all (one holding a NUL character, which a
YAML double-quoted "\\0" writes) is a failed check naming why, not an internal error."""

from __future__ import annotations

from pathlib import Path

from check_gate import check_gate_repo

from cli_process import run_cli as _cli

CONFIG = """\
version: 1
commands:
  test: "printf 'a\\0b'"
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
"""


def test_a_check_command_that_cannot_start_fails_its_check(tmp_path: Path) -> None:
    root = check_gate_repo(tmp_path / "repo", "nul", ["test"], config=CONFIG, item="n")
    done = _cli(root, "run", "n")
    shown = done.stdout + done.stderr
    assert "internal error" not in shown, shown
    assert done.returncode == 4, shown
    assert "✗ check test failed: its command could not start" in shown, shown
    assert "NUL character" in shown, shown
