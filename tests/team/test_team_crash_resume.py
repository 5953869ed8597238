"""Crash safety of the ``team`` workflow: kill -9 a session anywhere; running it again ends
where one uninterrupted run ends (architecture principle 3, seed 003's resume protocol).

The run has both gates (answered with ``--answer``), a Reviewer BLOCKED -> FIX_REVIEW
round, a failing acceptance check -> FIX_BUILD, tasks.yaml promotions and the Definition
of Done, so kills land inside foreach items, repair loops, actions and check rounds.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from team_helpers import (
    DESCRIPTION,
    ITEM,
    LIMIT_BROKEN,
    LIMIT_OK,
    SESSION,
    cli,
    make_team_repo,
    team_script,
    verdict,
)

from phasegate.engine.state import read_state_file

pytestmark = pytest.mark.slow

ANSWERS = ("--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch")
#: When things happened, how long they took, how far the journal was applied, and token
#: counts (a re-dispatched agent's prompt may list files its interrupted attempt left).
VOLATILE = {
    "started",
    "completed",
    "created",
    "updated",
    "entered",
    "timestamp",
    "journal",
    "asked_at",
    "answered_at",
    "resolved_at",
    "copilot_checked_at",
    "last_update",
    "at",
    "input_tokens",
    "output_tokens",
    "inputTokens",
    "outputTokens",
    "base_commit",
    "tries",
    "brief",
}
SLEEP = 0.03


def crash_script() -> dict[str, Any]:
    script = team_script()
    script["reviewer"] = {
        "review:T1": [verdict("BLOCKED", "no test"), verdict("OK")],
        "*": [verdict("OK")],
    }
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    script["coder"]["fix-build"] = [{"write": {"src/limit.py": LIMIT_OK}, "text": "ok() fixed"}]
    for by_node in script.values():
        for replies in by_node.values():
            for reply in replies:
                reply["sleep"] = SLEEP
    return script


def make_crash_repo(root: Path) -> Path:
    repo = make_team_repo(root, crash_script())
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    return repo


def run(repo: Path, env: dict[str, str] | None = None) -> int:
    result = cli(repo, "run", ITEM, *ANSWERS, env=env)
    if result.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"phasegate run exited {result.returncode}:\n{result.stderr}")
    return result.returncode


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def snapshot(repo: Path) -> tuple[Any, dict[str, bytes]]:
    """status.json and the engine state (normalized), and every other file of the repo."""
    state = {
        "status": normalized(json.loads((repo / SESSION / "status.json").read_text())),
        "engine": normalized(read_state_file(repo / SESSION / ".engine.json").to_dict()),
    }
    files: dict[str, bytes] = {}
    skip = {
        f"{SESSION.as_posix()}/{n}"
        for n in ("status.json", ".engine.json", ".engine-archive.jsonl", ".journal.jsonl")
    }
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_dir() or rel.startswith((".git/", ".phasegate/locks/", ".phasegate/cache/")):
            continue
        if rel in skip or rel == ".phasegate/calls.jsonl":
            continue
        files[rel] = path.read_bytes()
    return state, files


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, bytes], float]:
    repo = make_crash_repo(tmp_path_factory.mktemp("reference") / "repo")
    started = time.monotonic()
    assert run(repo) == 0
    elapsed = time.monotonic() - started
    state, files = snapshot(repo)
    assert state["status"]["current_state"] == "DONE"
    assert state["status"]["retry_counts"]["T1"]["FIX_REVIEW"] == 1
    assert state["status"]["retry_counts"]["meta"]["FIX_BUILD"] == 1
    return state, files, elapsed


def test_team_random_kill_9_moments_resume_to_the_same_final_state(
    reference: tuple[Any, dict[str, bytes], float], tmp_path: Path
) -> None:
    """>= 12 SIGKILLs at random moments of a team session; each chain of restarts ends
    equal to the clean run: same status.json, same engine state, same files."""
    ref_state, ref_files, elapsed = reference
    rng = random.Random(20261123)
    kills = 0
    chain = 0
    while kills < 12:
        chain += 1
        repo = make_crash_repo(tmp_path / f"chain{chain}")
        for _ in range(300):
            proc = subprocess.Popen(
                [sys.executable, "-m", "phasegate", "run", ITEM, *ANSWERS],
                cwd=repo,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            try:
                code = proc.wait(timeout=rng.uniform(0.3, max(0.8, elapsed * 0.4)))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                continue
            assert code == 0, proc.stderr.read().decode() if proc.stderr else code
            break
        else:  # pragma: no cover - the run never finished
            pytest.fail("the run made no progress across restarts")
        assert run(repo) == 0  # a finished session stays finished
        state, files = snapshot(repo)
        assert state == ref_state
        assert files == ref_files, sorted(set(files.items()) ^ set(ref_files.items()))
        _one_result_per_call(repo)
    assert kills >= 12


def _one_result_per_call(repo: Path) -> None:
    """No agent call whose result was journaled is dispatched again, and each call key
    has exactly one recorded result."""
    events = [json.loads(x) for x in (repo / SESSION / ".journal.jsonl").read_text().splitlines()]
    done: set[str] = set()
    for event in events:
        if event["event"] == "agent.dispatched":
            assert event["key"] not in done, f"{event['key']} dispatched after its result"
        elif event["event"] == "agent.finished" and event["ok"]:
            assert event["key"] not in done, f"{event['key']} has two results"
            done.add(event["key"])
    assert done


@pytest.mark.parametrize(
    ("point", "every"),
    [
        ("dispatch.before_call", 3),
        ("agent.returned", 3),
        ("state.after_commit", 4),
        ("journal.after_append", 16),
    ],
)
def test_team_crash_at_each_named_point_resumes_to_the_same_final_state(
    reference: tuple[Any, dict[str, bytes], float], tmp_path: Path, point: str, every: int
) -> None:
    """A crash exactly at each write boundary, again and again (group commit off: a state
    commit before every agent call), loses and repeats nothing."""
    ref_state, ref_files, _ = reference
    repo = make_crash_repo(tmp_path / "repo")
    crashes = 0
    env = {"PHASEGATE_COALESCE_SECONDS": "0"}
    # Crash at the every-th..(every+4)-th hit in turn (a fixed count could always land on
    # the same boundary and never let the run move on).
    while run(repo, {**env, "PHASEGATE_CRASH_AT": f"{point}@{every + crashes % 5}"}) != 0:
        crashes += 1
        assert crashes < 400, "no progress between crashes"
    assert crashes >= 3
    state, files = snapshot(repo)
    assert state == ref_state
    assert files == ref_files, sorted(set(files.items()) ^ set(ref_files.items()))
    _one_result_per_call(repo)
