"""A check whose command the shell cannot find (exit code 127: not installed, or not on
PATH) says so, in the run's progress, in the block and in the issue fed back to the
executor, instead of a bare exit code the agent is asked to fix."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import init_repo

from cli_process import run_cli as _cli

CONFIG = """\
version: 1
commands:
  test: "no-such-tool-xyz --run"
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
"""

WORKFLOW = """\
name: missing
items_dir: work
modes:
  standard: {max_iterations: 1}
roles:
  worker: {access: write}
nodes:
  - id: build
    executor: worker
    prompt: build.md
    checks: [test]
    on: {pass: done}
  - id: done
    kind: end
"""

SCRIPT = """\
worker:
  "*": [{write: {"a.py": "x = 1\\n"}}]
"""

HINT = "a command it runs was not found: is it installed and on PATH?"


def checked_repo(root: Path, config: str = CONFIG) -> Path:
    """A repository whose workflow ``missing`` is one agent node with the check ``test``
    (the command ``config`` gives it), and its item ``m``, not run yet."""
    init_repo(root)
    prompts = root / ".phasegate" / "workflows" / "prompts" / "missing"
    prompts.mkdir(parents=True)
    (prompts / "build.md").write_text("Build {{ item }}.\n")
    (root / ".phasegate" / "config.yaml").write_text(config)
    (root / ".phasegate" / "agents.yaml").write_text(SCRIPT)
    (root / ".phasegate" / "workflows" / "missing.yaml").write_text(WORKFLOW)
    assert _cli(root, "new", "m", "--workflow", "missing", "--description", "x").returncode == 0
    return root


def test_a_check_command_missing_from_path_is_named_as_such(tmp_path: Path) -> None:
    root = checked_repo(tmp_path / "repo")
    done = _cli(root, "run", "m")
    assert done.returncode == 4, done.stdout + done.stderr
    shown = done.stdout + done.stderr
    assert "✗ check test failed (exit 127: command not found)" in shown, shown
    assert f"failed with exit code 127 ({HINT}). Fix it" in shown, shown
    # The issue the executor is given (kept in the node's state) says it too.
    state = (root / "work" / "m" / ".engine.json").read_text()
    assert HINT in state
