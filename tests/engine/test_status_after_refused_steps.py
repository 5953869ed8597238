"""``status`` after a run stopped by a step that refused to go on: a loop whose items file
is gone, a parallel loop in a repository without a commit, a parallel loop whose merged
work conflicts with the work tree. Each is shown blocked with the run's reason (the table
too), journaled, and no longer once a run goes on; not ``interrupted`` nor ``in progress``
with nothing said."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cli_process import run_cli

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
{parallel}    body:
      - {{id: code, executor: coder}}
      - {{id: coded, kind: end}}
  - {{id: done, kind: end}}
"""
PLANNER = {"*": [{"write": {"{item_dir}/tasks.md": "# Tasks\n\n- [ ] T1: one\n- [ ] T2: two\n"}}]}
CODER = {
    "code:T1": [{"write": {"src/T1.py": "one\n"}}],
    "code:T2": [{"write": {"src/T2.py": "two\n"}}],
}


def _repo(tmp_path: Path, *, parallel: bool, commit: bool = True, coder: Any = None) -> Path:
    repo = tmp_path / "repo"
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "fan"
    prompts.mkdir(parents=True)
    (prompts / "plan.md").write_text("Write {{ artifact_path }}\n")
    (prompts / "code.md").write_text("Do {{ task }}\n")
    (repo / ".phasegate" / "workflows" / "fan.yaml").write_text(
        FAN.format(parallel="    parallel: 2\n" if parallel else "")
    )
    script = {"planner": PLANNER, "coder": coder or CODER}
    (repo / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    (repo / ".phasegate" / "config.yaml").write_text(
        "roles:\n  default: {backend: scripted}\n"
        "backends:\n  scripted: {script: .phasegate/agents.yaml}\n"
    )
    (repo / "common.txt").write_text("line1\nline2\nline3\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    if commit:
        _commit(repo)
    return repo


def _commit(repo: Path) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-q", "-m", "c"], cwd=repo, check=True)


def _status(repo: Path) -> tuple[str, dict[str, Any], str]:
    """``status f1``, ``status f1 --json`` and the table's row of f1."""
    shown = run_cli(repo, "status", "f1")
    assert shown.returncode == 0, shown.stderr
    data = run_cli(repo, "status", "f1", "--json")
    assert data.returncode == 0, data.stderr
    table = run_cli(repo, "status")
    assert table.returncode == 0, table.stderr
    row = next(line for line in table.stdout.splitlines() if line.split()[:1] == ["f1"])
    return shown.stdout, json.loads(data.stdout), row


def _events(repo: Path) -> list[dict[str, Any]]:
    text = (repo / "work" / "fan" / "f1" / ".journal.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _assert_blocked(repo: Path, reason: str) -> tuple[str, dict[str, Any]]:
    shown, data, row = _status(repo)
    assert data["blocked"] is not None and reason in data["blocked"], data["blocked"]
    assert data["blockedBy"] == {"by": "refused", "node": "tasks"}, data["blockedBy"]
    assert not (data["inProgress"] or {}).get("interrupted"), data["inProgress"]
    assert "Phase: tasks, blocked" in shown, shown
    assert "Blocked:" in shown and reason in " ".join(shown.split()), shown
    assert "the next run resumes it" not in shown, shown
    assert data["nextCommand"] == "fix the block, then: phasegate run f1", data["nextCommand"]
    assert row.split()[2] == "blocked", row
    last = _events(repo)[-1]
    assert last["event"] == "transition.blocked" and reason in last["message"], last
    return shown, data


def test_a_loop_whose_items_cannot_be_read_is_blocked_with_the_reason(tmp_path: Path) -> None:
    repo = _repo(tmp_path, parallel=False)
    assert run_cli(repo, "new", "f1", "-w", "fan", "-d", "x").returncode == 0
    assert run_cli(repo, "run", "f1", "--until", "plan").returncode == 0
    (repo / "work" / "fan" / "f1" / "tasks.md").unlink()
    refused = run_cli(repo, "run", "f1")
    assert refused.returncode == 4, refused.stderr
    assert "tasks.md does not exist, so the items of tasks cannot be read" in refused.stderr
    _assert_blocked(repo, "tasks.md does not exist, so the items of tasks cannot be read")


def test_a_parallel_loop_without_a_commit_says_to_commit_first(tmp_path: Path) -> None:
    repo = _repo(tmp_path, parallel=True, commit=False)
    assert run_cli(repo, "new", "f1", "-w", "fan", "-d", "x").returncode == 0
    refused = run_cli(repo, "run", "f1")
    assert refused.returncode == 2, refused.stderr
    shown, _ = _assert_blocked(repo, "has no commit to start them from: commit first")

    # Committed: the next run goes on, and the block is no longer said.
    _commit(repo)
    done = run_cli(repo, "run", "f1")
    assert done.returncode == 0, done.stdout + done.stderr
    shown, data, row = _status(repo)
    assert data["status"] == "completed" and data["blocked"] is None, data
    assert row.split()[2] == "completed", row
    assert "Blocked" not in shown, shown


def test_a_landing_conflict_is_blocked_naming_the_files_and_what_to_do(tmp_path: Path) -> None:
    coder = {
        "code:T1": [{"sleep": 3, "write": {"common.txt": "line1\nT1\nline3\n"}}],
        "code:T2": [{"write": {"src/T2.py": "two\n"}}],
    }
    repo = _repo(tmp_path, parallel=True, coder=coder)
    assert run_cli(repo, "new", "f1", "-w", "fan", "-d", "x").returncode == 0
    running = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", "f1"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    journal = repo / "work" / "fan" / "f1" / ".journal.jsonl"
    deadline = time.monotonic() + 60
    while '"tasks[T1]/code"' not in (journal.read_text() if journal.exists() else ""):
        assert time.monotonic() < deadline and running.poll() is None, running.communicate()
        time.sleep(0.05)
    # The person edits the line T1 changes while T1's call runs (3 s).
    (repo / "common.txt").write_text("line1\nUSER\nline3\n")
    _, err = running.communicate(timeout=120)
    assert running.returncode == 4, err
    assert "conflicts with it in common.txt" in err, err
    _, data = _assert_blocked(repo, "conflicts with it in common.txt")
    assert "resolve the conflict markers" in data["blocked"], data["blocked"]
    assert "then run again: phasegate run f1" in data["blocked"], data["blocked"]

    # Resolved: the next run lands the work and the item completes.
    (repo / "common.txt").write_text("line1\nUSER\nT1\nline3\n")
    done = run_cli(repo, "run", "f1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _status(repo)[1]["blocked"] is None
