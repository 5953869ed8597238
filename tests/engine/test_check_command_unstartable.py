"""A check command the system cannot start at all (one holding a NUL character, which a
YAML double-quoted "\\0" writes) is a failed check naming why, not an internal error."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import init_repo

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

WORKFLOW = """\
name: nul
items_dir: work
modes:
  standard: {max_iterations: 1}
roles:
  worker: {access: write}
nodes:
  - id: checks
    kind: check
    run: [test]
    on: {pass: done, fail: broken}
  - id: done
    kind: end
  - id: broken
    kind: end
    status: blocked
    message: the checks did not pass
"""


def test_a_check_command_that_cannot_start_fails_its_check(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    (root / ".phasegate" / "workflows").mkdir(parents=True)
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text("{}\n")
    (root / ".phasegate" / "workflows" / "nul.yaml").write_text(WORKFLOW)
    assert _cli(root, "new", "n", "--workflow", "nul", "--description", "x").returncode == 0
    done = _cli(root, "run", "n")
    shown = done.stdout + done.stderr
    assert "internal error" not in shown, shown
    assert done.returncode == 4, shown
    assert "✗ check test failed: its command could not start" in shown, shown
    assert "NUL character" in shown, shown
