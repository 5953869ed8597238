"""A run killed inside a check round: the checks that had finished are not run again.

Each command journals its outcome as it finishes (``check.finished``); a resumed
run reuses those outcomes and runs only the commands that had not finished,
whether the run died while a later command ran or after the last one finished
but before the round itself was recorded (``checks.completed``).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from check_gate import check_gate_repo

from cli_process import run_cli


def _repo(tmp_path: Path, second: str) -> tuple[Path, Path]:
    log = tmp_path / "ran.log"
    commands = [
        f'{{name: first, run: "echo first >> {log}"}}',
        f'{{name: second, run: "{second}"}}',
    ]
    root = check_gate_repo(
        tmp_path / "repo", "gate", [c.replace("LOG", str(log)) for c in commands]
    )
    return root, log


def _finished(root: Path) -> list[str]:
    journal = (root / "work" / "s" / ".journal.jsonl").read_text().splitlines()
    return [e["check"] for e in map(json.loads, journal) if e["event"] == "check.finished"]


def test_a_run_killed_while_a_later_check_runs_does_not_run_the_finished_ones_again(
    tmp_path: Path,
) -> None:
    mark = tmp_path / "killed-once"
    # The second command kills phasegate itself (as kill -9 would), the first time only.
    second = f"echo second >> LOG; if [ ! -e {mark} ]; then touch {mark}; kill -9 $PPID; fi"
    root, log = _repo(tmp_path, second)
    killed = run_cli(root, "run", "s")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert log.read_text().split() == ["first", "second"]
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 0, resumed.stderr
    # `first` had finished: only `second`, which the kill interrupted, ran again.
    assert log.read_text().split() == ["first", "second", "second"]
    assert "↺ check first's recorded result (passed) reused; not run again" in resumed.stderr
    assert "running check first" not in resumed.stderr


def test_a_run_killed_after_the_last_check_finished_runs_none_again(tmp_path: Path) -> None:
    root, log = _repo(tmp_path, "echo second >> LOG")
    # Killed after the second check's outcome was journaled, before the round's.
    env = {"PHASEGATE_CRASH_AT": "check.finished@2"}
    killed = run_cli(root, "run", "s", env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _finished(root) == ["first", "second"]
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 0, resumed.stderr
    assert log.read_text().split() == ["first", "second"]
    assert _finished(root) == ["first", "second"]
    assert "not run again" in resumed.stderr


def test_a_finished_check_whose_command_holds_a_secret_is_not_run_again(tmp_path: Path) -> None:
    # The journal masks the key in the command: the check is still known as the same one.
    root, log = _repo(tmp_path, "echo second >> LOG")
    workflow = root / ".phasegate" / "workflows" / "gate.yaml"
    secret = "export API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789; "
    workflow.write_text(
        workflow.read_text().replace('run: "echo first', f'run: "{secret}echo first')
    )
    killed = run_cli(root, "run", "s", env={"PHASEGATE_CRASH_AT": "check.finished@1"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert "abcdefghij" not in (root / "work" / "s" / ".journal.jsonl").read_text()
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 0, resumed.stderr
    assert log.read_text().split() == ["first", "second"]
