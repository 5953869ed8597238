"""A run killed after a phase completed in the journal but before a state commit said so.

The state file lags the journal (the kill came between the two, or commits were grouped
behind the journal): the next run picks up where the journal says the item was. It asks
nothing about the phase the journal shows complete (the half-done phase question, a
transition warning) and runs none of that phase's work again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from crash_helpers import KILLED, backend_calls, journal
from engine_helpers import approving_script, init_repo
from ruamel.yaml import YAML

from phasegate.engine.state import read_state_file

pytestmark = pytest.mark.slow

ITEM = "lag"
FOLDER = Path("docs/features") / ITEM

#: (commit mode, crash point): each kills the run with brainstorm complete in the journal,
#: specify started, and the state file still at brainstorm. ``0`` commits every step (the
#: fourth commit is the one after brainstorm completed); the default groups the commits of
#: fast agents, so the state is still at brainstorm when specify's executor is dispatched.
MODES = {
    "every-step": ({"PHASEGATE_COALESCE_SECONDS": "0"}, "state.before_commit@4"),
    "default": ({}, "dispatch.before_call@3"),
}


def run(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "PHASEGATE_COALESCE_SECONDS"}
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**environ, **env},
        timeout=120,
    )


def killed_after_brainstorm(root: Path, mode: str) -> tuple[Path, dict[str, str], int]:
    """A repo whose run was killed as described in MODES; the commit mode's environment, and
    how many backend calls the killed run made."""
    env, point = MODES[mode]
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
    assert run(repo, "new", ITEM, "--description", "lagging state", env=env).returncode == 0
    crashed = run(repo, "run", ITEM, "--until", "specify", env={**env, "PHASEGATE_CRASH_AT": point})
    assert crashed.returncode == KILLED, crashed.stderr
    events = [e["event"] for e in journal(repo, FOLDER) if e.get("node") == "brainstorm"]
    assert "phase.completed" in events, events
    state = read_state_file(repo / FOLDER / ".engine.json")
    assert state.at == "brainstorm", "the state file does not lag the journal: nothing to test"
    return repo, env, len(backend_calls(repo))


def brainstorm_calls(repo: Path, after: int) -> list[dict[str, Any]]:
    return [c for c in backend_calls(repo)[after:] if "brainstorm" in str(c)]


def completed(repo: Path) -> dict[str, bool]:
    state = read_state_file(repo / FOLDER / ".engine.json")
    found = {}
    for name in ("brainstorm", "specify"):
        node = state.peek(name)
        found[name] = node is not None and node.get("outcome") == "pass"
    return found


@pytest.mark.parametrize("mode", sorted(MODES))
def test_resume_asks_nothing_about_a_phase_the_journal_shows_complete(
    tmp_path: Path, mode: str
) -> None:
    repo, env, calls_before = killed_after_brainstorm(tmp_path / "repo", mode)
    # "fresh" would start a half-done phase again: brainstorm is not half done.
    resumed = run(repo, "run", ITEM, "--until", "specify", "--partial", "fresh", env=env)
    assert resumed.returncode == 0, resumed.stderr
    output = resumed.stdout + resumed.stderr
    assert "partial-phase" not in output
    assert "started but not completed" not in output
    assert not brainstorm_calls(repo, calls_before), "brainstorm's finished work was run again"
    assert completed(repo) == {"brainstorm": True, "specify": True}
    asked = [e for e in journal(repo, FOLDER) if e.get("id") == "partial-phase"]
    assert asked == []


@pytest.mark.parametrize("mode", sorted(MODES))
def test_phase_after_the_completed_one_starts_without_a_warning(tmp_path: Path, mode: str) -> None:
    repo, env, calls_before = killed_after_brainstorm(tmp_path / "repo", mode)
    resumed = run(repo, "run", ITEM, "--phase", "specify", env=env)
    assert resumed.returncode == 0, resumed.stderr
    output = resumed.stdout + resumed.stderr
    assert "transition-warning" not in output
    assert "skipping brainstorm" not in output
    assert not brainstorm_calls(repo, calls_before)
    assert completed(repo) == {"brainstorm": True, "specify": True}
    abandoned = [e for e in journal(repo, FOLDER) if e["event"] == "phase.abandoned"]
    assert abandoned == []


@pytest.mark.parametrize("nth", [1, 2, 3])
def test_a_resume_killed_as_it_catches_up_is_caught_up_by_the_next(
    tmp_path: Path, nth: int
) -> None:
    """The resumed run commits as it replays brainstorm: killed there, the next run still
    knows from the journal that brainstorm was complete and specify next."""
    repo, env, calls_before = killed_after_brainstorm(tmp_path / "repo", "every-step")
    again = {**env, "PHASEGATE_CRASH_AT": f"state.before_commit@{nth}"}
    killed = run(repo, "run", ITEM, "--until", "specify", env=again)
    assert killed.returncode == KILLED, killed.stderr
    resumed = run(repo, "run", ITEM, "--until", "specify", "--partial", "fresh", env=env)
    assert resumed.returncode == 0, resumed.stderr
    output = killed.stdout + resumed.stdout + resumed.stderr
    assert "partial-phase" not in output
    assert not brainstorm_calls(repo, calls_before), "brainstorm's finished work was run again"
    assert completed(repo) == {"brainstorm": True, "specify": True}
