"""What the crash tests share: running phasegate to its end or its crash point, comparing states.

A crash test kills ``phasegate run`` with SIGKILL (at random moments, or at a
named crash point of :mod:`phasegate.faults`), runs it again until it ends,
and compares the result with one uninterrupted run: the same final state
(timestamps and attempt ids aside), the same files, and no agent call whose
result was recorded dispatched again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from phasegate.engine.state import read_state_file

# Token counts too: an executor dispatched again after a crash sees the files
# its interrupted attempt left, so its prompt (and the scripted backend's token
# estimate, which follows prompt length) can differ. ``calls`` still must match.
VOLATILE = {
    "inputTokens",
    "outputTokens",
    "started",
    "completed",
    "created",
    "timestamp",
    "dispatched",
    "durationS",
    "attemptCounter",
    "attemptId",
    "baseCommit",
    "tries",
    # The engine's own record: when things happened, how far the journal was applied.
    "entered",
    "updated",
    "journal",
    "input_tokens",
    "output_tokens",
    "base_commit",
    # When a decision was asked and answered.
    "asked_at",
    "answered_at",
}
KILLED = -signal.SIGKILL


def phasegate(
    repo: Path, *args: str, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)
) -> int:
    """Run phasegate (no terminal) to its end or its crash point; any other exit fails."""
    result = subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    if result.returncode not in (*ok, KILLED):
        raise AssertionError(
            f"phasegate {' '.join(args)} exited {result.returncode}:\n{result.stderr}"
        )
    return result.returncode


def crash_until_done(
    repo: Path, args: tuple[str, ...], point: str, coalesce: str = "0", limit: int = 300
) -> int:
    """Run ``args`` crashing at ``point`` until a run ends; crashes. The first run and the
    first resumed run crash at the point's 2nd hit (a resumed run may pass a point fewer
    times than a fresh one: what the journal recorded is not done again), later ones at
    its 3rd, 4th, 5th, 2nd... hit in turn."""
    crashes = 0
    # A fixed hit count could land on the same boundary every time and never let
    # a run move on.
    while (
        phasegate(
            repo,
            *args,
            env={
                "PHASEGATE_CRASH_AT": f"{point}@{2 + max(crashes - 1, 0) % 4}",
                "PHASEGATE_COALESCE_SECONDS": coalesce,
            },
        )
        != 0
    ):
        crashes += 1
        assert crashes < limit, "no progress between crashes"
    return crashes


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Where two normalized states differ, as readable paths (for failure messages)."""
    if isinstance(got, dict) and isinstance(want, dict):
        found: list[str] = []
        for key in sorted(set(got) | set(want)):
            found += differences(got.get(key), want.get(key), f"{path}.{key}")
        return found
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [
            d
            for i, (g, w) in enumerate(zip(got, want, strict=True))
            for d in differences(g, w, f"{path}[{i}]")
        ]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def snapshot(
    repo: Path, folder: Path, view_state: str | None = None
) -> tuple[Any, dict[str, bytes]]:
    """The normalized state (the view's state file, if any, and the engine's) and every
    other file of the repository."""
    state: dict[str, Any] = {}
    if view_state is not None:
        state = normalized(json.loads((repo / folder / view_state).read_text()))
    engine = read_state_file(repo / folder / ".engine.json").to_dict()
    for change in engine.get("history") or []:
        change.pop("at", None)  # when the phase changed: a timestamp
    state["engine"] = normalized(engine)
    skipped = {
        f"{folder.as_posix()}/{name}"
        for name in (view_state, ".engine.json", ".engine-archive.jsonl", ".journal.jsonl")
        if name is not None
    }
    files: dict[str, bytes] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_dir() or rel.startswith((".git/", ".phasegate/locks/", ".phasegate/cache/")):
            continue
        if rel in skipped or rel == ".phasegate/calls.jsonl":
            continue
        files[rel] = path.read_bytes()
    return state, files


def journal(repo: Path, folder: Path) -> list[dict[str, Any]]:
    """The item's journal, one event a line."""
    lines = (repo / folder / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def backend_calls(repo: Path) -> list[dict[str, Any]]:
    """Every call the scripted backend received, in order (its ``calls_log``)."""
    path = repo / ".phasegate" / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_no_recorded_call_dispatched_again(repo: Path, folder: Path) -> int:
    """Each logical call (the engine's call key) has exactly one recorded result, and
    neither the journal nor the backend saw that call again after it; returns how many
    results were recovered from the journal instead of calling again."""
    events = journal(repo, folder)
    dispatched: dict[str, list[str]] = defaultdict(list)
    finished_ok: dict[str, list[str]] = defaultdict(list)
    for event in events:
        if event["event"] == "agent.dispatched":
            dispatched[event["key"]].append(event["attempt"])
        elif event["event"] == "agent.finished" and event["ok"]:
            finished_ok[event["key"]].append(event["attempt"])
    assert finished_ok, "no agent call finished"
    twice = {key: attempts for key, attempts in finished_ok.items() if len(attempts) > 1}
    assert not twice, f"calls whose result was recorded more than once: {twice}"
    key_of = {attempt: key for key, attempts in dispatched.items() for attempt in attempts}
    calls = backend_calls(repo)
    seen_by_backend: dict[str, list[str]] = defaultdict(list)
    for call in calls:
        seen_by_backend[key_of.get(call["attempt"], "?")].append(call["attempt"])
    for key, (attempt,) in finished_ok.items():
        assert dispatched[key][-1] == attempt, (key, dispatched[key])
        if calls:
            assert seen_by_backend[key][-1] == attempt, (key, seen_by_backend[key])
    return sum(1 for e in events if e["event"] == "agent.recovered")
