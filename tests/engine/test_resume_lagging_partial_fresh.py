"""A run killed midway through a phase its state file does not show started.

The state file lags the journal: it says brainstorm, the journal says brainstorm completed,
specify started and specify's executor answered. The next run is about specify, a phase
left half done: ``--partial fresh`` starts it again from its first iteration (its executor
called again), ``--partial continue`` reuses the recorded answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from crash_helpers import KILLED, backend_calls, journal
from engine_helpers import approving_script, init_repo
from ruamel.yaml import YAML
from test_resume_lagging_state import FOLDER, ITEM, run

from phasegate.engine.state import read_state_file

pytestmark = pytest.mark.slow

#: Grouped commits (the default): killed as specify's reviewer is dispatched, the state
#: file is still at brainstorm while the journal has specify's executor's answer.
POINT = "dispatch.before_call@4"


def killed_in_specify(root: Path) -> tuple[Path, int]:
    """The repo, and how many backend calls the killed run made."""
    repo = init_repo(root)
    (repo / ".phasegate").mkdir()
    yaml = YAML(typ="safe", pure=True)
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {
            "scripted": {"script": ".phasegate/agents.yaml", "calls_log": ".phasegate/calls.jsonl"}
        },
    }
    with open(repo / ".phasegate" / "config.yaml", "w") as handle:
        yaml.dump(config, handle)
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        yaml.dump(approving_script(), handle)
    assert run(repo, "new", ITEM, "--description", "lagging state", env={}).returncode == 0
    crashed = run(repo, "run", ITEM, "--until", "specify", env={"PHASEGATE_CRASH_AT": POINT})
    assert crashed.returncode == KILLED, crashed.stderr
    finished = [e["key"] for e in journal(repo, FOLDER) if e["event"] == "agent.finished"]
    assert "specify#1/1/execute/0" in finished, finished
    state = read_state_file(repo / FOLDER / ".engine.json")
    assert state.at == "brainstorm", "the state file does not lag the journal: nothing to test"
    return repo, len(backend_calls(repo))


def specify_executor_calls(repo: Path, after: int) -> list[dict[str, Any]]:
    return [
        c
        for c in backend_calls(repo)[after:]
        if c.get("phase") == "specify" and c.get("role") == "executor"
    ]


def assert_replay_shown_once(repo: Path) -> None:
    """``phasegate logs``: brainstorm's lines the resumed run journaled again are shown once."""
    shown = run(repo, "logs", ITEM, env={}).stdout
    ended = [x for x in shown.splitlines() if " brainstorm " in x and "completed after" in x]
    assert len(ended) == 1, shown
    assert "of the interrupted run replayed (shown once above)" in shown, shown


def test_partial_fresh_starts_the_half_done_phase_again(tmp_path: Path) -> None:
    repo, calls_before = killed_in_specify(tmp_path / "repo")
    resumed = run(repo, "run", ITEM, "--until", "specify", "--partial", "fresh", env={})
    assert resumed.returncode == 0, resumed.stderr
    assert specify_executor_calls(repo, calls_before), "specify was continued, not started fresh"
    asked = [e for e in journal(repo, FOLDER) if e.get("id") == "partial-phase"]
    answers = [e["choice"] for e in asked if e["event"] == "decision.answered"]
    assert answers == ["fresh"]
    assert_replay_shown_once(repo)


def test_partial_continue_reuses_the_recorded_answer(tmp_path: Path) -> None:
    repo, calls_before = killed_in_specify(tmp_path / "repo")
    resumed = run(repo, "run", ITEM, "--until", "specify", "--partial", "continue", env={})
    assert resumed.returncode == 0, resumed.stderr
    assert not specify_executor_calls(repo, calls_before)
    started = [
        e for e in journal(repo, FOLDER) if e["event"] == "node.started" and e["node"] == "specify"
    ]
    assert len(started) == 1, started
    assert_replay_shown_once(repo)
