"""``status`` after a fault in a loop that runs its items at once: the run stopped on a
failed agent call of one item (while another item finished) says ``stopped`` and names
the call, not ``interrupted``; a later run that took the item up again and was killed is
``interrupted``; a budget cap answered ``stop`` in one item says what stopped it and the
command that raises it; a check node of an item runs in that item's worktree, and a loop
one of whose items is blocked says ``blocked``, not ``in progress``. The dashboard's
item page counts the loop's items as ``status`` does."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cli_process import cli_in_process as cli
from cli_process import run_cli
from phasegate.dashboard.server import create_app
from phasegate.errors import ExitCode

FAN = """\
name: fan
items_dir: work/fan
modes: {{standard: {{max_iterations: 2}}}}
roles:
  planner: {{access: write}}
  coder: {{access: write}}
nodes:
  - {{id: plan, executor: planner, outputs: [tasks.md]}}
  - id: tasks
    kind: foreach
    items: {{parser: markdown-tasks, file: tasks.md}}
    order: deps
    parallel: 2
    body:
      - {{id: code, executor: coder, max_visits: 2{checks}}}
{check}      - {{id: coded, kind: end}}
  - {{id: done, kind: end}}
"""
CHECK = """\
      - id: test
        kind: check
        run: [unit-tests]
        on: {fail: code}
"""
PLANNER = {"*": [{"write": {"{item_dir}/tasks.md": "# Tasks\n\n- [ ] T1: one\n- [ ] T2: two\n"}}]}


def _repo(
    tmp_path: Path,
    coder: dict[str, Any],
    *,
    check: bool = False,
    checks: bool = False,
    config: str = "",
) -> Path:
    repo = tmp_path / "repo"
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "fan"
    prompts.mkdir(parents=True)
    (prompts / "plan.md").write_text("Write {{ artifact_path }}\n")
    (prompts / "code.md").write_text("Do {{ task }}\n")
    (repo / ".phasegate" / "workflows" / "fan.yaml").write_text(
        FAN.format(check=CHECK if check else "", checks=", checks: [unit-tests]" if checks else "")
    )
    _script(repo, coder)
    (repo / ".phasegate" / "config.yaml").write_text(
        "roles:\n  default: {backend: scripted}\n"
        "backends:\n  scripted: {script: .phasegate/agents.yaml}\n" + config
    )
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-q", "-m", "i"], cwd=repo, check=True)
    return repo


def _script(repo: Path, coder: dict[str, Any]) -> None:
    script = {"planner": PLANNER, "coder": coder}
    (repo / ".phasegate" / "agents.yaml").write_text(json.dumps(script))


def _status(capsys: pytest.CaptureFixture[str], repo: Path) -> tuple[str, Any, str]:
    """``status f1``, ``status f1 --json`` and the ``status`` table's row of f1."""
    code, shown, err = cli(capsys, "status", "f1", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "status", "f1", "--json", "-C", str(repo))
    assert code == 0, err
    code, table, err = cli(capsys, "status", "-C", str(repo))
    assert code == 0, err
    row = next(line for line in table.splitlines() if line.split()[:1] == ["f1"])
    return shown, json.loads(out), row


FAILING = {
    "code:T1": [{"fail": {"exit": 1, "error": "the model is overloaded"}}],
    "code:T2": [{"sleep": 0.6, "write": {"src/T2.py": "two\n"}}],
}


def test_a_failed_call_in_one_parallel_item_is_what_stopped_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path, FAILING)
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.AGENT, out + err
    # T2 finished after T1's call failed: the journal's last events are T2's.
    assert '"node": "tasks[T2]' in (repo / "work/fan/f1/.journal.jsonl").read_text()[-2000:]

    shown, data, row = _status(capsys, repo)
    assert data["lastFailure"]["node"] == "tasks[T1]/code", data["lastFailure"]
    assert "Phase: tasks, stopped: 1 of 2 items done" in shown, shown
    assert (
        "Last run failed: coder failed in tasks[T1]/code after 2 attempts: the model is overloaded"
    ) in shown, shown
    assert row.split()[2] == "stopped", row
    # The dashboard's item page says so too, and counts the items as status does.
    with TestClient(create_app(repo), base_url="http://127.0.0.1:8765") as client:
        page = client.get("/items/f1").text
    assert "<dt>last run failed</dt>" in page
    assert "tasks items: 1 done, 1 failed" in shown
    assert "<b>tasks</b> items: 1 done, 1 failed" in page

    # A later run took T1 up again and was killed in its call: interrupted, not stopped.
    _script(repo, {"*": [{"write": {"src/{task}.py": "done\n"}}]})
    killed = run_cli(repo, "run", "f1", env={"PHASEGATE_CRASH_AT": "agent.returned@1"})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    shown, data, row = _status(capsys, repo)
    assert data["lastFailure"] is None, data["lastFailure"]
    assert "Phase: tasks, interrupted: 1 of 2 items done" in shown, shown
    assert "Last run failed" not in shown
    assert row.split()[2] == "interrupted", row

    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == 0, out + err
    shown, data, row = _status(capsys, repo)
    assert data["status"] == "completed" and data["lastFailure"] is None


def test_a_budget_stop_in_a_parallel_loop_says_what_stopped_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    coder = {"*": [{"sleep": 0.3, "write": {"src/{task}.py": "z\n"}, "cost_usd": 0.3}]}
    repo = _repo(tmp_path, coder, config="budget:\n  item: {usd: 0.2}\n")
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    # The first coder call is made (nothing reported a cost yet), then the cap holds.
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    shown, data, _ = _status(capsys, repo)
    assert data["nextCommand"] == "phasegate answer f1 budget raise", data["nextCommand"]
    assert "waiting on a decision: the budget cap item.usd holds its next call" in shown

    assert cli(capsys, "answer", "f1", "budget", "stop", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    shown, data, row = _status(capsys, repo)
    assert data["inProgress"]["budget"] == {"cap": "item.usd", "answer": "stop", "iteration": 1}
    assert (
        "Phase: tasks, stopped by the budget cap item.usd (answered stop); the next run asks again"
    ) in shown, shown
    assert "the next run acts on it" not in shown, shown
    assert data["nextCommand"] == "phasegate run f1 --answer budget=raise"
    assert "phasegate run f1 --answer budget=raise" in row, row
    statuses = [i["status"] for i in data["phases"][1]["items"]]
    assert "answered" not in statuses and "failed" in statuses, data["phases"][1]["items"]


def test_a_check_in_a_parallel_item_runs_in_its_worktree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    coder = {"*": [{"sleep": 0.2, "write": {"src/{task}.py": "z\n"}}]}
    # T1's check fails in T1's worktree, where its coder wrote src/T1.py; T2's passes.
    config = 'commands:\n  unit-tests: "test ! -f src/T1.py"\n'
    repo = _repo(tmp_path, coder, check=True, config=config)
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err

    shown, data, row = _status(capsys, repo)
    items = {i["key"]: i["status"] for i in data["phases"][1]["items"]}
    assert items == {"T1": "failed", "T2": "done"}, data["phases"][1]["items"]
    assert "Phase: tasks, blocked: 1 of 2 items done" in shown, shown
    assert row.split()[2] == "blocked", row


def test_a_parallel_item_whose_checks_still_fail_blocks_on_its_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    coder = {"*": [{"sleep": 0.2, "write": {"src/{task}.py": "z\n"}}]}
    config = 'commands:\n  unit-tests: "test ! -f src/T1.py"\n'
    repo = _repo(tmp_path, coder, checks=True, config=config)
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err

    shown, data, row = _status(capsys, repo)
    assert data["blockedBy"] == {"by": "checks", "node": "tasks"}, data["blockedBy"]
    assert "Phase: tasks, blocked (checks failed): 1 of 2 items done" in shown, shown
    assert row.split()[2] == "blocked", row
