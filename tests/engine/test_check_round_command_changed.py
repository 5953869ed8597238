"""A run killed after a check round was recorded, before the state said so: the next run
reuses the round only while its commands are the ones that ran.

A command changed meanwhile (a check fixed in the workflow or the configuration) runs
again, as a check of a round the run died in does: the recorded outcome is another
command's.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from check_gate import check_gate_repo

from cli_process import run_cli


def _events(root: Path) -> list[str]:
    journal = (root / "work" / "s" / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line)["event"] for line in journal if line.strip()]


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "ran.log"
    commands = [f'{{name: first, run: "echo first >> {log}; exit 1"}}']
    root = check_gate_repo(tmp_path / "repo", "gate", commands)
    # node.started, check.started, check.finished, checks.completed: killed after the last.
    killed = run_cli(root, "run", "s", env={"PHASEGATE_CRASH_AT": "journal.after_append@4"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _events(root)[-1] == "checks.completed"
    return root, log


def test_a_recorded_round_whose_command_changed_runs_again(tmp_path: Path) -> None:
    root, log = _repo(tmp_path)
    workflow = root / ".phasegate" / "workflows" / "gate.yaml"
    workflow.write_text(workflow.read_text().replace("exit 1", "exit 0"))
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert log.read_text().split() == ["first", "first"]


def test_a_recorded_round_whose_commands_are_the_same_is_reused(tmp_path: Path) -> None:
    root, log = _repo(tmp_path)
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 4, resumed.stdout + resumed.stderr
    assert log.read_text().split() == ["first"]


def test_a_recorded_round_whose_command_holds_a_secret_is_reused(tmp_path: Path) -> None:
    # The journal masks the key in the command: the round is still known as the same one.
    log = tmp_path / "ran.log"
    secret = "export API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789; "
    commands = [f'{{name: first, run: "{secret}echo first >> {log}; exit 1"}}']
    root = check_gate_repo(tmp_path / "repo", "gate", commands)
    killed = run_cli(root, "run", "s", env={"PHASEGATE_CRASH_AT": "journal.after_append@4"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _events(root)[-1] == "checks.completed"
    assert "abcdefghij" not in (root / "work" / "s" / ".journal.jsonl").read_text()
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 4, resumed.stdout + resumed.stderr
    assert log.read_text().split() == ["first"]
