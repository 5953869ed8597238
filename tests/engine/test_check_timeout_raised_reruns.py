"""A check that ran out of time (`timeouts.check`) is run again after a run was killed,
when the limit was raised since: its recorded outcome says only that it did not finish in
the smaller limit, not how it ends in the one it has now. (Raising the limit is the way
out the timed-out check's message names.) Under the same limit, or a smaller one, the
recorded outcome is reused, as every recorded check is."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from check_gate import SCRIPTED_CONFIG, check_gate_repo

from cli_process import run_cli


def _events(root: Path) -> list[str]:
    journal = (root / "work" / "s" / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line)["event"] for line in journal if line.strip()]


def _killed_after(tmp_path: Path, last: str, at: int) -> tuple[Path, Path]:
    """The check round's one command timed out under a 1s limit; the run was killed just
    after the journal recorded ``last`` (the ``at``-th event)."""
    log = tmp_path / "ran.log"
    commands = [f'{{name: slow, run: "echo slow >> {log}; sleep 4"}}']
    config = SCRIPTED_CONFIG + "timeouts: {check: 1}\n"
    root = check_gate_repo(tmp_path / "repo", "gate", commands, config=config)
    env = {"PHASEGATE_CRASH_AT": f"journal.after_append@{at}"}
    killed = run_cli(root, "run", "s", env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert _events(root)[-1] == last
    return root, log


def _limit(root: Path, seconds: int) -> None:
    path = root / ".phasegate" / "config.yaml"
    path.write_text(
        path.read_text().replace("timeouts: {check: 1}", f"timeouts: {{check: {seconds}}}")
    )


# node.started, check.started, check.finished, checks.completed.
KILLS = [("checks.completed", 4), ("check.finished", 3)]


@pytest.mark.parametrize(("last", "at"), KILLS)
def test_a_raised_limit_runs_the_timed_out_check_again(tmp_path: Path, last: str, at: int) -> None:
    root, log = _killed_after(tmp_path, last, at)
    _limit(root, 60)
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert log.read_text().split() == ["slow", "slow"]


@pytest.mark.parametrize(("last", "at"), KILLS)
def test_the_same_limit_reuses_the_recorded_outcome(tmp_path: Path, last: str, at: int) -> None:
    root, log = _killed_after(tmp_path, last, at)
    resumed = run_cli(root, "run", "s")
    assert resumed.returncode == 4, resumed.stdout + resumed.stderr
    assert log.read_text().split() == ["slow"]


def test_the_timed_out_check_names_the_setting_to_raise(tmp_path: Path) -> None:
    """The way out: the progress line names `timeouts.check` with the limit it ran out of."""
    log = tmp_path / "ran.log"
    commands = [f'{{name: slow, run: "echo slow >> {log}; sleep 4"}}']
    config = SCRIPTED_CONFIG + "timeouts: {check: 1}\n"
    root = check_gate_repo(tmp_path / "repo", "gate", commands, config=config)
    done = run_cli(root, "run", "s")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "✗ check slow timed out after 1s (timeouts.check)" in done.stdout + done.stderr
