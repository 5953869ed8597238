"""Crash safety: kill -9 a run at many moments; running again must end where one clean run ends.

Invariants pinned (architecture principle 3):
- the final state equals an uninterrupted run's (timestamps and attempt ids aside);
- no agent call whose result was recorded is dispatched again;
- no artifact is lost, and no temp file is left behind.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import approving_script, init_repo
from ruamel.yaml import YAML

pytestmark = pytest.mark.slow

ITEM = "crashy"
FOLDER = Path("docs/features") / ITEM
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
}
SLEEP = 0.04


def crash_script() -> dict[str, Any]:
    """A run with a rejection, a failing check, and a small delay in every agent call."""
    script = approving_script()
    script["executor"]["specify"] = [
        {"write": {"{item_dir}/spec.md": "# Spec v1\n"}, "text": "v1"},
        {"write": {"{item_dir}/spec.md": "# Spec v2\nAC1\n"}, "text": "v2"},
    ]
    script["executor"]["implement"] = [
        {"write": {"app.py": "ok = False\n"}, "text": "first try"},
        {"write": {"app.py": "ok = True\n"}, "text": "fixed"},
    ]
    script["chain-reviewer"] = {
        "specify": [
            {
                "verdict": {
                    "approved": False,
                    "summary": "thin",
                    "issues": [{"severity": "blocker", "description": "no AC", "location": None}],
                }
            },
            {"verdict": {"approved": True, "summary": "good", "issues": []}},
        ],
        "*": [{"verdict": {"approved": True, "summary": "ok", "issues": []}}],
    }
    for by_phase in (script["executor"], script["chain-reviewer"]):
        for replies in by_phase.values():
            for reply in replies:
                reply["sleep"] = SLEEP
    return script


#: Where the scripted agents log each call (the log survives a killed process): beside the
#: repository, since agents may not write to phasegate's own files.
CALLS_LOG = "../calls.jsonl"


def calls_log(repo: Path) -> Path:
    return repo.parent / "calls.jsonl"


def make_crash_repo(root: Path) -> Path:
    repo = init_repo(root)
    (repo / ".phasegate").mkdir()
    check = (
        "python3 -c \"import sys; sys.path.insert(0, '.'); import app; "
        'sys.exit(0 if app.ok else 1)"'
    )
    config = {
        "commands": {"test": check},
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "calls_log": CALLS_LOG}},
    }
    yaml = YAML(typ="safe", pure=True)
    with open(repo / ".phasegate" / "config.yaml", "w") as handle:
        yaml.dump(config, handle)
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        yaml.dump(crash_script(), handle)
    cli(repo, "new", ITEM, "--mode", "quick", "--description", "crash me")
    return repo


def cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> int:
    """Run phasegate to its end or its crash point; any other failure fails the test."""
    result = subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    if result.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(
            f"phasegate {' '.join(args)} exited {result.returncode}:\n{result.stderr}"
        )
    return result.returncode


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


def snapshot(repo: Path) -> tuple[Any, dict[str, bytes]]:
    """The normalized state (``.meta.json`` and the engine's own) and every other file."""
    state = normalized(json.loads((repo / FOLDER / ".meta.json").read_text()))
    engine = json.loads((repo / FOLDER / ".engine.json").read_text())
    for change in engine.get("history") or []:
        change.pop("at", None)  # when the phase changed: a timestamp
    state["engine"] = normalized(engine)
    files: dict[str, bytes] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_dir() or rel.startswith((".git/", ".phasegate/locks/", ".phasegate/cache/")):
            continue
        if rel in (
            f"{FOLDER.as_posix()}/.meta.json",
            f"{FOLDER.as_posix()}/.engine.json",
            f"{FOLDER.as_posix()}/.journal.jsonl",
        ):
            continue
        files[rel] = path.read_bytes()
    return state, files


def assert_no_recorded_call_dispatched_again(repo: Path) -> int:
    """Each logical call has exactly one recorded result, and no call after it."""
    events = [
        json.loads(line) for line in (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    ]
    finished_ok = Counter(
        (e["phase"], e["iteration"], e["role"])
        for e in events
        if e["event"] == "agent.finished" and e["ok"]
    )
    assert finished_ok and max(finished_ok.values()) == 1, finished_ok
    recorded = {
        e["attempt"]: (e["phase"], e["iteration"], e["role"])
        for e in events
        if e["event"] == "agent.finished" and e["ok"]
    }
    calls_by_key: dict[tuple[str, int, str], list[str]] = defaultdict(list)
    for line in calls_log(repo).read_text().splitlines():
        call = json.loads(line)
        calls_by_key[(call["phase"], int(call["iteration"]), call["role"])].append(call["attempt"])
    for attempt, key in recorded.items():
        assert calls_by_key[key][-1] == attempt, (key, calls_by_key[key])
    return sum(1 for e in events if e["event"] == "agent.recovered")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, bytes], float]:
    repo = make_crash_repo(tmp_path_factory.mktemp("reference") / "repo")
    started = time.monotonic()
    assert cli(repo, "run", ITEM) == 0
    elapsed = time.monotonic() - started
    state, files = snapshot(repo)
    assert state["status"] == "completed"
    return state, files, elapsed


def test_random_kill_9_moments_resume_to_the_same_final_state(
    reference: tuple[Any, dict[str, bytes], float], tmp_path: Path
) -> None:
    """>= 20 SIGKILLs at random moments; each chain of restarts ends equal to a clean run."""
    ref_state, ref_files, elapsed = reference
    rng = random.Random(20261122)
    kills = 0
    chain = 0
    while kills < 20:
        chain += 1
        repo = make_crash_repo(tmp_path / f"chain{chain}" / "repo")
        for _ in range(200):
            proc = subprocess.Popen(
                [sys.executable, "-m", "phasegate", "run", ITEM],
                cwd=repo,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            try:
                code = proc.wait(timeout=rng.uniform(0.2, max(0.6, elapsed * 0.5)))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                continue
            assert code == 0, proc.stderr.read().decode() if proc.stderr else code
            break
        else:  # pragma: no cover - the run never finished
            pytest.fail("the run made no progress across restarts")
        assert cli(repo, "run", ITEM) == 0  # an already complete item stays complete
        state, files = snapshot(repo)
        assert state == ref_state, differences(state, ref_state)
        assert files == ref_files, sorted(set(files.items()) ^ set(ref_files.items()))
        assert_no_recorded_call_dispatched_again(repo)
    assert kills >= 20


POINTS = [
    "journal.after_append",
    "journal.before_append",
    "state.before_commit",
    "state.after_commit",
    "atomic.before_replace",
    "dispatch.before_call",
    "dispatch.after_call",
]


@pytest.mark.parametrize(
    ("point", "coalesce"),
    [(p, "0") for p in POINTS]
    + [(p, "0.25") for p in ("state.after_commit", "dispatch.after_call")],
)
def test_crash_at_each_named_point_resumes_to_the_same_final_state(
    reference: tuple[Any, dict[str, bytes], float], tmp_path: Path, point: str, coalesce: str
) -> None:
    """A crash exactly at each write boundary, again and again, loses and repeats nothing.

    With coalescing off every step is committed; with it on (the default for
    fast agents) the state file lags the journal and a resumed run replays it.
    """
    ref_state, ref_files, _ = reference
    repo = make_crash_repo(tmp_path / "repo")
    crashes = 0
    # Crash at the 2nd..5th hit in turn: a fixed count could land on the same
    # boundary every time and never let a run move on.
    while (
        cli(
            repo,
            "run",
            ITEM,
            env={
                "PHASEGATE_CRASH_AT": f"{point}@{2 + crashes % 4}",
                "PHASEGATE_COALESCE_SECONDS": coalesce,
            },
        )
        != 0
    ):
        crashes += 1
        assert crashes < 300, "no progress between crashes"
    assert crashes >= 2
    state, files = snapshot(repo)
    assert state == ref_state, differences(state, ref_state)
    assert files == ref_files, sorted(set(files.items()) ^ set(ref_files.items()))
    recovered = assert_no_recorded_call_dispatched_again(repo)
    if point == "journal.after_append":
        assert recovered > 0  # results journaled before a crash were reused, not re-run
