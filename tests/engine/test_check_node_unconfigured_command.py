"""A check node naming a command the configuration lacks stops the run blocked (exit 4) at
once: its `fail` is not followed, which would send the work back to an agent (who cannot
configure a command) until the node's visit limit; once it is configured, the next run
runs the check again and goes on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: chk
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - {id: write, executor: writer, outputs: [notes.md]}
  - id: test
    kind: check
    run: [unit-tests]
    on: {fail: write}
  - {id: done, kind: end}
"""


def make_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *who, "commit", "-q", "--allow-empty", "-m", "i"], cwd=repo, check=True)
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "chk").mkdir(parents=True)
    (folder / "prompts" / "chk" / "write.md").write_text("Write notes for {{ item }}\n")
    (folder / "chk.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "config.yaml").write_text("roles:\n  default: {backend: auto}\n")
    return repo


def agent_calls(repo: Path) -> int:
    journal = repo / "work" / "c1" / ".journal.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    return sum(1 for event in events if event.get("event") == "agent.dispatched")


def test_an_unconfigured_command_stops_the_run_blocked_without_more_agent_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys)
    code, _, err = cli(capsys, "new", "c1", "-w", "chk", "-d", "x", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    assert "no 'unit-tests' command is configured; set commands.unit-tests" in err
    assert "exhausted" not in out + err
    assert agent_calls(repo) == 1  # the writer once: not again for each failed check
    code, out, err = cli(capsys, "status", "c1", "-C", str(repo))
    assert "Phase: test, blocked" in out, out

    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + 'commands:\n  unit-tests: "true"\n')
    code, out, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == 0, out + err
    assert agent_calls(repo) == 1  # the check ran again; the writer was not asked again
    code, out, _ = cli(capsys, "status", "c1", "-C", str(repo))
    assert "completed" in out.splitlines()[0], out


def test_a_failing_configured_command_still_follows_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Control: a command that runs and fails goes where `fail` leads (back to the writer)."""
    repo = make_repo(tmp_path, capsys)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + 'commands:\n  unit-tests: "false"\n')
    code, _, err = cli(capsys, "new", "c1", "-w", "chk", "-d", "x", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    assert "exhausted" in out + err  # the visit limit ended the loop
    assert agent_calls(repo) > 1
