"""A merge-conflict repair interrupted by kill -9 (README: Parallel tasks, Durability): the
next run makes that repair again; an attempt whose agent never answered is not counted."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from parallel_helpers import FOLDER, fan_repo, new_item, worktrees

HERE = Path(__file__).parent


def run_killing_the_first_repair(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HERE / "parallel_repair_run.py"), str(root)],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_repair_killed_while_its_agent_works_is_made_again_not_skipped(
    tmp_path: Path,
) -> None:
    """With one repair attempt allowed, a run killed while the agent repairs the conflict
    resumes with that same attempt (dispatched again), not with a person asked as if the
    attempt had failed; the run completes with the repaired file."""
    root = fan_repo(tmp_path / "repo", extra="    conflicts: {attempts: 1}\n")
    new_item(root)
    killed = run_killing_the_first_repair(root)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = run_killing_the_first_repair(root)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "completed"
    events = [
        json.loads(line) for line in (root / FOLDER / ".journal.jsonl").read_text().splitlines()
    ]
    repairs = [e for e in events if e["event"] == "agent.dispatched" and e["stage"] == "repair"]
    keys = Counter(e["key"] for e in repairs)
    assert keys[repairs[0]["key"]] == 2  # the killed attempt, made again
    assert all(n == 1 for key, n in keys.items() if key != repairs[0]["key"])
    assert not [e for e in events if e["event"] == "decision.needed"]
    assert (root / "src" / "shared.py").read_text() == "LIMIT = 13\n"
    assert worktrees(root) == []
