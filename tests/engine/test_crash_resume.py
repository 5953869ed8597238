"""Crash safety: kill -9 a run at many moments; running again must end where one clean run ends.

Invariants pinned (architecture principle 3):
- the final state equals an uninterrupted run's (timestamps and attempt ids aside);
- no agent call whose result was recorded is dispatched again;
- no artifact is lost, and no temp file is left behind.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from crash_helpers import assert_no_recorded_call_dispatched_again as no_call_twice
from crash_helpers import crash_until_done, differences, phasegate
from crash_helpers import snapshot as crash_snapshot
from engine_helpers import approving_script, init_repo
from ruamel.yaml import YAML

pytestmark = pytest.mark.slow

ITEM = "crashy"
FOLDER = Path("docs/features") / ITEM
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
        "backends": {
            "scripted": {"script": ".phasegate/agents.yaml", "calls_log": ".phasegate/calls.jsonl"}
        },
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
    return phasegate(repo, *args, env=env)


def snapshot(repo: Path) -> tuple[Any, dict[str, bytes]]:
    """The normalized state (``.meta.json`` and the engine's own) and every other file."""
    return crash_snapshot(repo, FOLDER, ".meta.json")


def assert_no_recorded_call_dispatched_again(repo: Path) -> int:
    """Each logical call has exactly one recorded result, and no call after it."""
    return no_call_twice(repo, FOLDER)


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
        repo = make_crash_repo(tmp_path / f"chain{chain}")
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
    "state.after_archive",
    "atomic.before_replace",
    "dispatch.before_call",
    "dispatch.after_call",
]


@pytest.mark.parametrize(
    ("point", "coalesce"),
    [(p, "0") for p in POINTS]
    + [(p, "0.25") for p in ("state.after_commit", "state.after_archive", "dispatch.after_call")],
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
    crashes = crash_until_done(repo, ("run", ITEM), point, coalesce)
    assert crashes >= 2
    state, files = snapshot(repo)
    assert state == ref_state, differences(state, ref_state)
    assert files == ref_files, sorted(set(files.items()) ^ set(ref_files.items()))
    recovered = assert_no_recorded_call_dispatched_again(repo)
    if point == "journal.after_append":
        assert recovered > 0  # results journaled before a crash were reused, not re-run
