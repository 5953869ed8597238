"""``phasegate worktree remove ITEM`` while a run of the item goes on is refused (exit 7,
busy), even with ``--force``: its agents work in those worktrees."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.errors import ExitCode


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "PHASEGATE_DEBUG": ""},
    )


def test_worktree_remove_refuses_while_a_run_works_in_them(tmp_path: Path) -> None:
    """``--force`` while a run goes on: refused (exit 7, busy), its agents' worktrees kept;
    the run finishes with every item's work."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    working, release = threading.Event(), threading.Event()

    def hold(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") == "T1":
            working.set()
            release.wait(60)
        return None

    outcome: list[str] = []
    runner = threading.Thread(
        target=lambda: outcome.append(run(root, Agents(delay=0.0, special=hold)).status)
    )
    runner.start()
    try:
        assert working.wait(60)
        refused = phasegate(root, "worktree", "remove", ITEM, "--force")
    finally:
        release.set()
        runner.join(120)
    assert refused.returncode == ExitCode.BUSY, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "another phasegate process is running it" in line
    assert outcome == ["completed"]
    assert (root / "src" / "T1.py").read_text() == "# T1\n"
    assert (root / "src" / "T4.py").read_text() == "# T4\n"
