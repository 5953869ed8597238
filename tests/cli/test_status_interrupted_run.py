"""``phasegate status NAME`` after a run was killed (SIGKILL) or interrupted (Ctrl-C) in
the middle of a node says so: the node is shown ``interrupted`` (no run goes on, the next
run resumes it), not ``in progress``; ``--json`` has ``inProgress.interrupted``. A run that
stopped on a failed agent call is shown ``stopped`` there."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
sys.path.insert(0, str(Path(__file__).parent))
from dashboard_helpers import ITEM, approving_script, new_repo, phasegate
from test_status_live import running, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

INTERRUPTED = (
    "Phase: brainstorm, interrupted: iteration 1 of 3 (execute); no run is going on, "
    "the next run resumes it"
)


def _status(repo: Path) -> tuple[str, Any]:
    shown = phasegate(repo, "status", ITEM, env={"COLUMNS": "300"})
    assert shown.returncode == 0, shown.stderr
    data = phasegate(repo, "status", ITEM, "--json")
    assert data.returncode == 0, data.stderr
    return shown.stdout, json.loads(data.stdout)


def _stopped_mid_call(tmp_path: Path, signum: int) -> Path:
    """An item whose run was stopped by ``signum`` during brainstorm's executor call."""
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}, "sleep": 60}
    ]
    repo = new_repo(tmp_path / "repo", script)
    journal = repo / "docs" / "features" / ITEM / ".journal.jsonl"
    with running(repo, ITEM) as run:
        wait_for(run, journal, "agent.dispatched")
        run.send_signal(signum)
        run.wait(timeout=30)
    return repo


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["killed", "ctrl-c"])
def test_status_says_a_node_its_killed_run_left_midway_is_interrupted(
    tmp_path: Path, signum: int
) -> None:
    repo = _stopped_mid_call(tmp_path, signum)
    shown, data = _status(repo)
    assert INTERRUPTED in shown, shown
    assert "in progress" not in shown, shown
    assert f"Next: phasegate run {ITEM}" in shown
    assert data["running"] is None
    assert data["inProgress"]["interrupted"] is True
    assert data["inProgress"]["iteration"] == 1
    assert data["nextCommand"] == f"phasegate run {ITEM}"

    # What status advises resumes it: the run goes on from brainstorm to the end.
    script = approving_script()
    (repo / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    resumed = phasegate(repo, "run", ITEM, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    shown, data = _status(repo)
    assert data["inProgress"] is None and data["status"] == "completed"
    assert "interrupted" not in shown


def test_a_run_stopped_on_a_failed_agent_call_is_shown_stopped_not_interrupted(
    tmp_path: Path,
) -> None:
    script = approving_script()
    script["executor"]["brainstorm"] = [{"fail": {"exit": 1, "error": "the model is overloaded"}}]
    repo = new_repo(tmp_path / "repo", script)
    failed = phasegate(repo, "run", ITEM)
    assert failed.returncode != 0 and "the model is overloaded" in failed.stderr
    shown, data = _status(repo)
    assert data["inProgress"]["interrupted"] is True
    assert "Phase: brainstorm, stopped: iteration 1 of 3 (execute); no run is going on" in shown
    assert "Last run failed: executor failed in brainstorm" in shown, shown
