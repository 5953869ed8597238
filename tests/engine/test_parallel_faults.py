"""A parallel foreach under faults: Ctrl-C stops every agent; kill -9 at random moments."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import git
from parallel_helpers import FOLDER, fan_repo, new_item, worktrees

from phasegate.engine.state import read_state_file

HERE = Path(__file__).parent


def start(root: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE / "parallel_run.py"), str(root), mode],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def journal(root: Path) -> list[dict[str, Any]]:
    path = root / FOLDER / ".journal.jsonl"
    found = []
    for line in path.read_text().splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue  # a torn last line
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of an exited test child counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_ctrl_c_stops_every_running_agent_and_journals_each_abandoned(tmp_path: Path) -> None:
    """SIGINT while three agents run: every agent's process is killed within the grace
    period, each call is journaled as abandoned, the run exits 130; the next run
    dispatches those calls again and nothing else twice."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    pids = tmp_path / "pids"
    proc = start(root, "sleepers")
    deadline = time.monotonic() + 30
    while not (pids.exists() and len(pids.read_text().split()) >= 3):
        assert time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else ""
        time.sleep(0.05)
    children = [int(p) for p in pids.read_text().split()]
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130, proc.stderr.read() if proc.stderr else ""
    assert time.monotonic() - started < 10
    time.sleep(0.2)
    assert [p for p in children if alive(p)] == []
    abandoned = [e for e in journal(root) if e["event"] == "agent.abandoned"]
    assert sorted(e["node"] for e in abandoned) == [
        "tasks[T1]/code",
        "tasks[T2]/code",
        "tasks[T3]/code",
    ]
    finished = subprocess.run(
        [sys.executable, str(HERE / "parallel_run.py"), str(root), "crash"],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    assert duplicate_dispatches(journal(root)) == []


def duplicate_dispatches(events: list[dict[str, Any]]) -> list[str]:
    """Keys dispatched again after their result was recorded (never allowed)."""
    recorded: set[str] = set()
    twice: list[str] = []
    for event in events:
        if event["event"] == "agent.dispatched" and event["key"] in recorded:
            twice.append(event["key"])
        if event["event"] == "agent.finished" and event.get("ok"):
            if event["key"] in recorded:
                twice.append(event["key"])
            recorded.add(event["key"])
    return twice


def outcome_of(root: Path) -> dict[str, Any]:
    """What a finished run leaves: files, the merged history, the engine's verdicts."""
    files = {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted((root / "src").rglob("*"))
        if p.is_file()
    }
    # The fan-out's refs are removed once its work landed: the state names the merged commit.
    merged = read_state_file(root / FOLDER / ".engine.json").to_dict()["nodes"]["tasks"]
    log = git(
        root, "log", "--topo-order", "--format=%H%x00%T%x00%P%x00%s", merged["fanout"]["merged"]
    )
    rows = [line.split("\0") for line in log.splitlines()]
    # Parents as positions in the log: hashes differ with the fan-out's start time.
    index = {row[0]: i for i, row in enumerate(rows)}
    shape = [
        (tree, [index[p] for p in parents.split()], subject) for _, tree, parents, subject in rows
    ]
    state = read_state_file(root / FOLDER / ".engine.json").to_dict()
    nodes = {
        path: (node.get("outcome"), node.get("iteration"), node.get("review"))
        for path, node in state["nodes"].items()
    }
    items = {k: v["status"] for k, v in state["nodes"]["tasks"]["items"].items()}
    return {
        "files": files,
        "history": shape,
        "nodes": nodes,
        "items": items,
        "status": state["status"],
    }


def test_a_kill_after_a_conflict_is_resolved_leaves_no_worktree_behind(tmp_path: Path) -> None:
    """Killed after the repaired merge is recorded but before its worktree is removed: the
    next run uses the recorded merge and removes that worktree with the others."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    killed = subprocess.run(
        [sys.executable, str(HERE / "parallel_run.py"), str(root), "crash"],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "PHASEGATE_CRASH_AT": "fanout.conflict_resolved"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert any("conflict-" in path for path in worktrees(root))
    finished = subprocess.run(
        [sys.executable, str(HERE / "parallel_run.py"), str(root), "crash"],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    assert worktrees(root) == []
    assert (root / "src" / "shared.py").read_text() == "LIMIT = 13\n"
    assert duplicate_dispatches(journal(root)) == []


@pytest.mark.slow
def test_kill_9_at_random_moments_of_a_fan_out_changes_nothing_but_time(tmp_path: Path) -> None:
    """At least 50 SIGKILLs at random moments of parallel runs (one of them through a merge
    conflict and its repair): each run resumed to the end gives the files, merged history
    and state of an uninterrupted run, with zero duplicate dispatches."""
    reference_root = fan_repo(tmp_path / "reference")
    new_item(reference_root)
    clean = subprocess.run(
        [sys.executable, str(HERE / "parallel_run.py"), str(reference_root), "crash"],
        cwd=reference_root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert clean.returncode == 0, clean.stderr
    reference = outcome_of(reference_root)
    assert reference["status"] == "completed"
    assert reference["files"]["src/shared.py"] == "LIMIT = 13\n"
    rng = random.Random(int(os.environ.get("PHASEGATE_CRASH_SEED", "11")))
    kills, repos = 0, 0
    while kills < 50:
        repos += 1
        root = fan_repo(tmp_path / f"repo{repos}")
        new_item(root)
        for _ in range(200):
            proc = start(root, "crash")
            try:
                proc.wait(timeout=rng.uniform(0.05, 1.2))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                kills += 1
                continue
            assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
            break
        events = journal(root)
        assert duplicate_dispatches(events) == [], root
        assert outcome_of(root) == reference, root
        assert worktrees(root) == []
    assert kills >= 50


def test_at_a_terminal_running_items_show_in_a_live_table(tmp_path: Path) -> None:
    """``phasegate run`` at a terminal: while items run in parallel, one line per running
    item (what it does, for how long) is drawn live; the run completes."""
    import pty
    import select

    root = fan_repo(
        tmp_path / "repo",
        config=(
            "version: 1\nroles:\n  default: {backend: scripted}\n"
            "backends:\n  scripted: {script: .phasegate/agents.yaml}\n"
        ),
    )
    (root / ".phasegate" / "agents.yaml").write_text(
        "planner:\n  '*': [{write: {'{item_dir}/tasks.md': \"- [ ] T1: a\\n- [ ] T2: b\\n\"}}]\n"
        "coder:\n  '*': [{write: {'src/{task}.py': 'x = 1\\n'}, sleep: 1.5}]\n"
        "reviewer:\n  '*': [{verdict: {approved: true, summary: ok, issues: []}}]\n"
    )
    new_item(root)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", "fan-one"],
        cwd=root,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(follower)
    output = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    assert proc.wait(timeout=30) == 0, output.decode(errors="replace")[-2000:]
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode(errors="replace"))

    assert re.search(r"item\s+doing\s+for", text)  # the live table's header
    assert re.search(r"T1\s+coder \(scripted\) on code\s+[01]s", text)
    assert re.search(r"T2\s+coder \(scripted\) on code\s+1s", text)  # the time goes on
    assert "fan-one complete" in text


RUNNER = """\
import sys
from phasegate import ScriptedBackend, open_repo
from phasegate.agents.scripted import ScriptedReply

TASKS = "- [ ] T1: The bucket\\n- [ ] T2: The clock\\n"

def handler(request):
    task = request.labels.get("task", "")
    if request.role == "planner":
        return ScriptedReply(write={"{item_dir}/tasks.md": TASKS})
    if request.role == "reviewer":
        return ScriptedReply(structured={"approved": True, "summary": "ok", "issues": []})
    # each coder ticks its own task in the plan, as agents do
    ticked = TASKS.replace(f"- [ ] {task}:", f"- [x] {task}:")
    return ScriptedReply(write={f"src/{task}.py": "x = 1\\n", "{item_dir}/tasks.md": ticked})

open_repo(sys.argv[1]).run("fan-one", backends={"default": ScriptedBackend(handler=handler)})
"""


@pytest.mark.slow
def test_a_kill_before_the_items_are_committed_keeps_the_items_as_first_read(
    tmp_path: Path,
) -> None:
    """The items of a foreach are read once: killed after T1's coder ticked T1 in the plan,
    but before the state holding the items was committed, the resumed run takes the items
    from the journal (T1 still to do, so it is reviewed and done), not from the changed
    file (where T1 would now be skipped as already done). Killed at each journal write
    from the items' reading to T1's review."""
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    for nth in range(9, 16):
        root = fan_repo(tmp_path / f"repo{nth}", parallel=1)
        new_item(root)
        killed = subprocess.run(
            [sys.executable, str(runner), str(root)],
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            env={**os.environ, "PHASEGATE_CRASH_AT": f"journal.after_append@{nth}"},
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        finished = subprocess.run(
            [sys.executable, str(runner), str(root)],
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert finished.returncode == 0, finished.stderr
        state = read_state_file(root / FOLDER / ".engine.json").to_dict()
        items = state["nodes"]["tasks"]["items"]
        assert {k: v["status"] for k, v in items.items()} == {"T1": "done", "T2": "done"}, nth
        events = journal(root)
        reviewed = {e["key"] for e in events if e["event"] == "agent.dispatched"}
        assert "tasks[T1]/code#1/1/review:reviewer/0" in reviewed, nth
        assert duplicate_dispatches(events) == [], nth
