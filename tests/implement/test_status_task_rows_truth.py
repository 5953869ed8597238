"""`phasegate status` says what is true of each task: a task whose agent was at work when
the run was killed is `interrupted` (with what it was doing), not still implementing, and
the next command resumes it; a parallel task approved whose work (and PLAN.md tick) waits
for the phase's merged work is `approved, waiting to merge`, not `done`."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from implement_helpers import PLAN, cli, key
from test_implement_cli import ONE_TASK, SIGN, scripted_repo

PARALLEL = """# Plan: Signing

## Phase 1: Signing

**Execution: Parallel**

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Verify incoming payloads** [`agent: the-developer`]
"""
VERIFY = key("Verify incoming payloads")


def test_a_task_killed_mid_cycle_is_shown_interrupted(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script, plan=ONE_TASK)
    killed = cli(root, "implement", "006", env={"PHASEGATE_CRASH_AT": "agent.returned@1"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    row = status["tasks"][0]
    assert (row["key"], row["state"], row["was"], row["cycle"]) == (
        SIGN,
        "interrupted",
        "implementing",
        1,
    )
    assert status["nextCommand"] == "phasegate implement 006"
    shown = cli(root, "status", "006", env={"COLUMNS": "200"}).stdout
    assert "interrupted (implementing, cycle 1/3)" in shown, shown
    assert "implementing (cycle" not in shown, shown

    resumed = cli(root, "implement", "006", "-q")
    assert resumed.returncode == 0, resumed.stderr
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert [r["state"] for r in rows] == ["done"]


def test_an_approved_parallel_task_waiting_for_its_merge_is_not_done(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {
            f"implement:{SIGN}": [{"text": "APPROVED"}],
            f"implement:{VERIFY}": [{"text": "NEEDS_REVISION\nCheck the timestamp."}],
        },
    }
    root = scripted_repo(tmp_path, script, plan=PARALLEL, max_cycles=1)
    stopped = cli(root, "implement", "006", "-q")
    assert stopped.returncode == 3, stopped.stderr
    assert "- [ ] **Sign outgoing payloads**" in (root / PLAN).read_text()
    rows = {r["key"]: r for r in json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]}
    assert rows[SIGN]["state"] == "approved, waiting to merge"
    assert rows[VERIFY]["state"] == "escalated"
    shown = cli(root, "status", "006", env={"COLUMNS": "200"}).stdout
    assert "approved, waiting to merge" in shown, shown

    answered = cli(root, "answer", "006", f"escalate-{VERIFY}", "accept_as_is")
    assert answered.returncode == 0, answered.stderr
    assert cli(root, "implement", "006", "-q").returncode == 0
    rows = {r["key"]: r for r in json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]}
    assert (rows[SIGN]["state"], rows[VERIFY]["state"]) == ("done", "accepted")
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()
