"""``phasegate status NAME`` after a run met a fault says what happened: a check node whose
commands failed is shown failed (not completed); a budget cap that holds a node's next
call counts only the iterations that ran, and after `stop` says that the cap stopped it,
which cap, and the command that raises it (README "Budget caps")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_process import cli_in_process as cli
from phasegate.engine.live_run import write_live
from phasegate.errors import ExitCode

CHECKED = """\
name: chk
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - {id: write, executor: writer, outputs: [notes.md], max_visits: 2}
  - id: test
    kind: check
    run: [unit-tests]
    on: {fail: write}
  - {id: done, kind: end}
"""

#: Every executor call costs $0.30 and every review $0.10; reviewers never approve.
REJECTING = """\
executor:
  "*": [{write: {"{item_dir}/brainstorm.md": "# B\\n"}, cost_usd: 0.3}]
"*":
  "*":
    - verdict: {approved: false, summary: no, issues: [{severity: blocker, description: more}]}
      cost_usd: 0.1
"""


def _git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-q", "-m", "i"], cwd=repo, check=True)
    return repo


def _status(capsys: pytest.CaptureFixture[str], repo: Path, name: str) -> tuple[str, Any]:
    code, shown, err = cli(capsys, "status", name, "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "status", name, "--json", "-C", str(repo))
    assert code == 0, err
    return shown, json.loads(out)


def test_a_check_node_whose_commands_failed_is_shown_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _git_repo(tmp_path)
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "chk").mkdir(parents=True)
    (folder / "prompts" / "chk" / "write.md").write_text("Write notes for {{ item }}\n")
    (folder / "chk.yaml").write_text(CHECKED)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text('roles:\n  default: {backend: auto}\ncommands:\n  unit-tests: "false"\n')
    assert cli(capsys, "new", "c1", "-w", "chk", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err

    shown, data = _status(capsys, repo, "c1")
    test = next(p for p in data["phases"] if p["node"] == "test")
    assert test["status"] == "failed", test
    row = next(line for line in shown.splitlines() if line.split()[1:2] == ["test"])
    assert row.split()[0] == "✗" and "fail" in row.split(), shown

    config.write_text(config.read_text().replace('"false"', '"true"'))
    code, out, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == 0, out + err
    _, data = _status(capsys, repo, "c1")
    assert next(p for p in data["phases"] if p["node"] == "test")["status"] == "completed"


@pytest.fixture
def capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A feature item whose $0.80 cap holds its third executor call of brainstorm: two
    iterations ($0.30 + $0.10 each) ran, the third has not started."""
    repo = _git_repo(tmp_path)
    assert cli(capsys, "init", "--test-command", "true", "-C", str(repo))[0] == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\nbudget:\n  item: {usd: 0.8}\n")
    assert cli(capsys, "new", "it", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    assert "The executor call of brainstorm was not started" in err
    return repo


def test_a_call_a_budget_cap_holds_does_not_count_as_an_iteration(
    capped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown, data = _status(capsys, capped, "it")
    assert data["inProgress"]["iteration"] == 2, data["inProgress"]
    assert data["inProgress"]["budget"]["cap"] == "item.usd"
    brainstorm = next(p for p in data["phases"] if p["node"] == "brainstorm")
    assert brainstorm["iterations"] == 2
    assert "the budget cap item.usd holds its next call; 2 of 3 iterations ran" in shown, shown
    assert "Next: phasegate answer it budget raise" in shown


def test_status_after_a_budget_stop_names_the_cap_and_the_command_that_raises_it(
    capped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "answer", "it", "budget", "stop", "-C", str(capped))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-C", str(capped))
    assert code == ExitCode.BLOCKED, out + err

    shown, data = _status(capsys, capped, "it")
    assert "in progress" not in shown, shown
    assert (
        "Phase: brainstorm, stopped by the budget cap item.usd (answered stop; 2 of 3 "
        "iterations ran); the next run asks again"
    ) in shown, shown
    assert data["nextCommand"] == "phasegate run it --answer budget=raise"
    assert data["inProgress"]["budget"] == {"cap": "item.usd", "answer": "stop", "iteration": 3}
    _, table, _ = cli(capsys, "status", "-C", str(capped))
    assert "phasegate run it --answer budget=raise" in table, table

    # While a run goes on after the stop (it asks again, or the cap no longer holds the
    # call), the stop is not what status reports.
    live = write_live(capped / ".phasegate" / "locks" / "feature--it.run.lock", "feature", "it")
    assert live is not None
    _, data = _status(capsys, capped, "it")
    assert "budget" not in data["inProgress"], data["inProgress"]
    assert data["inProgress"]["iteration"] == 3
    assert data["nextCommand"] == "phasegate logs it -f"
    live.unlink()

    # The command status gives goes on: the third iteration runs (then the raised cap
    # holds the next phase's second iteration).
    code, out, err = cli(capsys, "run", "it", "--answer", "budget=raise", "-C", str(capped))
    assert code == ExitCode.WAITING, out + err
    assert "The executor call of specify was not started" in err
    shown, data = _status(capsys, capped, "it")
    brainstorm = next(p for p in data["phases"] if p["node"] == "brainstorm")
    assert brainstorm["iterations"] == 3, data
    assert data["inProgress"]["node"] == "specify"
    assert "item.usd holds its next call; 1 of 3 iterations ran" in shown, shown


GATED = """\
name: g
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - {id: write, executor: writer, outputs: [notes.md]}
  - id: approve
    kind: gate
    question: "Ship {{ item }}?"
    choices:
      ship: {to: done}
      drop: {to: dropped}
  - {id: done, kind: end}
  - {id: dropped, kind: end, label: dropped, status: stopped, message: Dropped at the gate.}
"""


def test_an_item_a_gate_dropped_says_why_it_stopped_and_what_was_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _git_repo(tmp_path)
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "g").mkdir(parents=True)
    (folder / "prompts" / "g" / "write.md").write_text("Write notes for {{ item }}\n")
    (folder / "g.yaml").write_text(GATED)
    (repo / ".phasegate" / "config.yaml").write_text("roles:\n  default: {backend: auto}\n")
    assert cli(capsys, "new", "b", "-w", "g", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "b", "--answer", "approve=drop", "-C", str(repo))
    assert code == 0, out + err

    shown, data = _status(capsys, repo, "b")
    assert data["endMessage"] == "Dropped at the gate."
    assert "Stopped at dropped: 1 phase completed without review. Dropped at the gate." in shown
    row = next(line for line in shown.splitlines() if line.split()[1:2] == ["approve"])
    assert row.split() == ["✔", "approve", "drop"], shown


def test_status_says_the_last_run_stopped_on_a_failed_agent_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _git_repo(tmp_path)
    assert cli(capsys, "init", "--test-command", "true", "-C", str(repo))[0] == 0
    script = repo / ".phasegate" / "agents.yaml"
    script.write_text('executor:\n  "*": [{fail: {exit: 1, error: the model is overloaded}}]\n')
    assert cli(capsys, "new", "it", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-C", str(repo))
    assert code != 0 and "the model is overloaded" in err, out + err

    shown, data = _status(capsys, repo, "it")
    assert data["lastFailure"]["role"] == "executor"
    assert data["lastFailure"]["node"] == "brainstorm"
    assert (
        "Last run failed: executor failed in brainstorm after 2 attempts: the model is overloaded"
    ) in shown, shown

    script.write_text(REJECTING)
    code, out, err = cli(capsys, "run", "it", "-C", str(repo))
    shown, data = _status(capsys, repo, "it")
    assert data["lastFailure"] is None, data["lastFailure"]
    assert "Last run failed" not in shown
