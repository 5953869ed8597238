"""Resume after PLAN.md was edited: an interrupted run that resumes reads the plan's task
list again, so a task added meanwhile is run in that same run (docs: Resume)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from implement_helpers import PLAN, cli, key
from test_implement_cli import APPROVING, SIGN, dispatched_tasks, scripted_repo

pytestmark = pytest.mark.slow

FIFTH = "Fifth task"
SIXTH = "Sixth task"


def add_task(root: Path, title: str) -> None:
    plan = root / PLAN
    plan.write_text(plan.read_text() + f"- [ ] **{title}** [`agent: the-developer`]\n")


def interrupt_while(root: Path, title: str) -> int:
    """``phasegate implement 006`` interrupted (SIGINT) while the agent of ``title`` works."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "implement", "006"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "PHASEGATE_COALESCE_SECONDS": "0"},
    )
    log = root / ".phasegate" / "implement" / "006" / ".journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        events = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        if any(
            e["event"] == "agent.dispatched" and f"tasks[{key(title)}]/" in e["path"]
            for e in events
        ):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail(f"the task {title!r} was never dispatched")
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    return proc.wait(timeout=60)


def slow_script() -> dict[str, object]:
    return {
        "the-developer": {
            **APPROVING["the-developer"],
            "implement:" + key(FIFTH): [{"write": {"src/fifth.py": "x = 5\n"}, "sleep": 5}],
        },
        "*": {"*": [{"text": "APPROVED"}]},
    }


def test_a_task_added_while_a_run_was_interrupted_is_run_when_it_resumes(
    tmp_path: Path,
) -> None:
    """The tester's scenario: a completed item gains a task, its run is interrupted while
    that task runs, another task is added; the resumed run does both, then completes."""
    root = scripted_repo(tmp_path, slow_script())
    assert cli(root, "implement", "006").returncode == 0
    add_task(root, FIFTH)
    assert interrupt_while(root, FIFTH) in (130, -signal.SIGINT)
    add_task(root, SIXTH)
    resumed = cli(root, "implement", "006")
    assert resumed.returncode == 0, resumed.stderr
    text = (root / PLAN).read_text()
    assert f"- [x] **{FIFTH}**" in text and f"- [x] **{SIXTH}**" in text
    assert dispatched_tasks(root, "the-developer")[-1] == key(SIXTH)
    assert dispatched_tasks(root, "the-developer").count(SIGN) == 1
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["status"] == "completed"
    assert {t["state"] for t in status["tasks"]} == {"done"}


def test_a_task_added_to_a_new_phase_while_interrupted_is_run_when_it_resumes(
    tmp_path: Path,
) -> None:
    """A first run interrupted, then a phase with a task added: the resumed run does it."""
    plan = (
        "# Plan\n\n## Phase 1: Signing\n\n"
        "- [ ] **Sign outgoing payloads** [`agent: the-developer`]\n"
        f"- [ ] **{FIFTH}** [`agent: the-developer`]\n"
    )
    root = scripted_repo(tmp_path, slow_script(), plan=plan)
    assert interrupt_while(root, FIFTH) in (130, -signal.SIGINT)
    path = root / PLAN
    path.write_text(
        path.read_text() + f"\n## Phase 2: Docs\n\n- [ ] **{SIXTH}** [`agent: the-developer`]\n"
    )
    resumed = cli(root, "implement", "006")
    assert resumed.returncode == 0, resumed.stderr
    text = path.read_text()
    assert f"- [x] **{FIFTH}**" in text and f"- [x] **{SIXTH}**" in text
    assert dispatched_tasks(root, "the-developer").count(SIGN) == 1
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["status"] == "completed"


def test_a_task_added_to_a_finished_phase_while_interrupted_is_run_when_it_resumes(
    tmp_path: Path,
) -> None:
    """Interrupted in phase 2, a task added to phase 1 (which had ended): the resumed run
    goes back to phase 1 for it, then finishes phase 2."""
    plan = (
        "# Plan\n\n## Phase 1: Signing\n\n"
        "- [ ] **Sign outgoing payloads** [`agent: the-developer`]\n\n"
        f"## Phase 2: Docs\n\n- [ ] **{FIFTH}** [`agent: the-developer`]\n"
    )
    root = scripted_repo(tmp_path, slow_script(), plan=plan)
    assert interrupt_while(root, FIFTH) in (130, -signal.SIGINT)
    path = root / PLAN
    path.write_text(
        path.read_text().replace(
            "\n## Phase 2", f"- [ ] **{SIXTH}** [`agent: the-developer`]\n\n## Phase 2"
        )
    )
    resumed = cli(root, "implement", "006")
    assert resumed.returncode == 0, resumed.stderr
    text = path.read_text()
    assert f"- [x] **{FIFTH}**" in text and f"- [x] **{SIXTH}**" in text
    assert dispatched_tasks(root, "the-developer").count(SIGN) == 1
    assert json.loads(cli(root, "status", "006", "--json").stdout)["status"] == "completed"


def test_a_task_added_to_a_parallel_phase_while_interrupted_is_run_when_it_resumes(
    tmp_path: Path,
) -> None:
    """Interrupted while a parallel phase's tasks run in their worktrees, a task added to
    that phase: the resumed run keeps the finished task and does the other two."""
    plan = (
        "# Plan\n\n## Phase 1: Signing\n**Execution: Parallel**\n\n"
        "- [ ] **Sign outgoing payloads** [`agent: the-developer`]\n"
        f"- [ ] **{FIFTH}** [`agent: the-developer`]\n"
    )
    root = scripted_repo(tmp_path, slow_script(), plan=plan)
    assert interrupt_while(root, FIFTH) in (130, -signal.SIGINT)
    add_task(root, SIXTH)
    resumed = cli(root, "implement", "006")
    assert resumed.returncode == 0, resumed.stderr
    text = (root / PLAN).read_text()
    assert f"- [x] **{FIFTH}**" in text and f"- [x] **{SIXTH}**" in text
    assert (root / "src" / "fifth.py").is_file()
    assert json.loads(cli(root, "status", "006", "--json").stdout)["status"] == "completed"


def table_row(root: Path, name: str = "006") -> list[str]:
    """The row of ``name`` in the ``phasegate status`` table."""
    table = cli(root, "status")
    assert table.returncode == 0, table.stderr
    return next(line.split() for line in table.stdout.splitlines() if line.split()[:1] == [name])


def test_the_status_table_agrees_with_status_name_when_a_task_is_added(
    tmp_path: Path,
) -> None:
    """A completed item whose PLAN.md gained a task, not run yet: `status 006` says it is
    active with `phasegate implement 006` next, and so does the table."""
    root = scripted_repo(tmp_path, APPROVING)
    assert cli(root, "implement", "006").returncode == 0
    assert table_row(root)[:3] == ["006", "implement", "completed"]
    add_task(root, SIXTH)
    one = json.loads(cli(root, "status", "006", "--json").stdout)
    assert (one["status"], one["nextCommand"]) == ("active", "phasegate implement 006")
    row = table_row(root)
    assert row[2] == "active" and " ".join(row).endswith("phasegate implement 006")
    assert cli(root, "implement", "006").returncode == 0
    assert table_row(root)[:3] == ["006", "implement", "completed"]
