"""The SessionStart hook says what ``phasegate status`` says of a node whose run was killed
(SIGKILL) or interrupted (Ctrl-C) midway: ``interrupted``, no run going on, the next run
resumes it; and ``stopped`` with the failed call for a run that stopped on an agent call
that failed every attempt. Not ``in progress``, which reads as a run still going on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
sys.path.insert(0, str(Path(__file__).parent.parent / "cli"))
from dashboard_helpers import ITEM, approving_script, new_repo, phasegate
from test_status_live import running, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def _context(repo: Path) -> str:
    """The context the hook gives a session started in ``repo``."""
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["killed", "ctrl-c"])
def test_the_hook_says_a_node_its_killed_run_left_midway_is_interrupted(
    tmp_path: Path, signum: int
) -> None:
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}, "sleep": 60}
    ]
    repo = new_repo(tmp_path / "repo", script)
    journal = repo / "docs" / "features" / ITEM / ".journal.jsonl"
    with running(repo, ITEM) as run:
        wait_for(run, journal, "agent.dispatched")
        context = _context(repo)  # while it runs: in progress, and it can be watched
        assert "- Phase: brainstorm in progress (review iteration 1 of 3" in context, context
        run.send_signal(signum)
        run.wait(timeout=30)
    status = phasegate(repo, "status", ITEM, env={"COLUMNS": "300"})
    assert "brainstorm, interrupted" in status.stdout, status.stdout
    context = _context(repo)
    assert (
        "- Phase: brainstorm, interrupted (review iteration 1 of 3, at execute); no run is "
        "going on, the next run resumes it"
    ) in context, context
    assert "in progress" not in context, context
    assert f"- Next command: phasegate run {ITEM}" in context


def test_the_hook_says_a_run_stopped_on_a_failed_agent_call_is_stopped(tmp_path: Path) -> None:
    script = approving_script()
    script["executor"]["brainstorm"] = [{"fail": {"exit": 1, "error": "the model is overloaded"}}]
    repo = new_repo(tmp_path / "repo", script)
    failed = phasegate(repo, "run", ITEM)
    assert failed.returncode != 0 and "the model is overloaded" in failed.stderr
    context = _context(repo)
    assert "- Phase: brainstorm, stopped (review iteration 1 of 3, at execute)" in context
    assert "the last run failed: executor failed in brainstorm" in context, context
    assert "the model is overloaded" in context
    assert "in progress" not in context, context
