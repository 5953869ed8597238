"""A run killed while phasegate itself writes the item's state (a parallel loop commits it
while other tasks' agents work) leaves that state as phasegate wrote it: the next run
neither puts it back nor says an agent changed it. No agent changed anything, so nothing
is claimed as an agent's change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ENGINE_TESTS = Path(__file__).resolve().parents[1] / "engine"

#: Makes the repository (``make``) or runs the item in a process of its own: T1's coder is
#: done at once, T2's and T3's take the seconds given, so T1's commits come while they work
#: (``kill``: T2's agent kills phasegate, changing nothing).
SCRIPT = """
import os, signal, sys, time
sys.path[:0] = [sys.argv[1], str(__import__("pathlib").Path(sys.argv[1]).parent)]
from pathlib import Path
from parallel_helpers import Agents, fan_repo, new_item, run
root, what = Path(sys.argv[2]), sys.argv[3]
if what == "make":
    fan_repo(root)
    new_item(root)
    sys.exit(0)
def special(request):
    if what == "kill" and request.labels.get("task") == "T2":
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGKILL)
    if what != "kill" and request.labels.get("task") != "T1":
        time.sleep(float(what))
    return None
run(root, Agents(delay=0, special=special))
"""

ITEM_DIR = Path("work/fan/fan-one")


def script(
    root: Path, what: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ENGINE_TESTS), str(root), what],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )


def events(root: Path) -> list[dict[str, object]]:
    lines = (root / ITEM_DIR / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("commit", [4, 5, 6])
def test_state_phasegate_wrote_when_killed_is_not_put_back_or_blamed_on_an_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commit: int
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    root = tmp_path / "repo"
    assert script(root, "make").returncode == 0
    # Every commit made as it comes (none coalesced): the one killed after is the same.
    crash = {
        "PHASEGATE_CRASH_AT": f"state.after_commit@{commit}",
        "PHASEGATE_COALESCE_SECONDS": "0",
    }
    killed = script(root, "1.5", crash)
    assert killed.returncode == -9, killed.stderr
    found = [str(e["event"]) for e in events(root)]
    # Killed while calls ran (T2's and T3's), right after one of phasegate's own commits.
    assert found.count("agent.dispatched") > found.count("agent.finished"), found
    written = (root / ITEM_DIR / ".engine.json").read_bytes()
    again = script(root, "0")
    assert again.returncode == 0, again.stderr
    assert "what the agent changed" not in again.stderr, again.stderr
    assert not [e for e in events(root) if e["event"] == "guard.restored"]
    kept = root / ".phasegate/cache/put-back/after-kill" / ITEM_DIR / ".engine.json"
    assert not kept.exists()
    assert written  # what phasegate wrote was there to resume from


def test_a_kill_during_a_call_that_changed_nothing_claims_no_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    root = tmp_path / "repo"
    assert script(root, "make").returncode == 0
    # T2's agent kills phasegate while T3's works; neither changed phasegate's files.
    killed = script(root, "kill")
    assert killed.returncode == -9, killed.stderr
    assert list((tmp_path / "user-cache").rglob("*.guard"))  # killed while calls ran
    again = script(root, "0")
    assert again.returncode == 0, again.stderr
    assert "killed" not in again.stderr and "put back" not in again.stderr, again.stderr
    assert not [e for e in events(root) if e["event"] == "guard.restored"]
    assert not (root / ".phasegate/cache/put-back").exists()
