"""``phasegate logs`` after a run was killed and resumed: what the resumed run journaled
again as it replayed the interrupted run's last events is shown once, with one line
saying so; a phase a person runs again is still shown each time it ran."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, approving_script, new_repo, phasegate

KILLED = -9


def completions(stdout: str, phase: str) -> list[str]:
    return [
        line for line in stdout.splitlines() if f" {phase} " in line and "completed after" in line
    ]


def test_a_resumed_runs_replayed_events_are_shown_once(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", approving_script())
    # Killed as specify's executor returns: brainstorm's end is journaled, not committed.
    killed = phasegate(
        repo, "run", ITEM, "--until", "specify", env={"PHASEGATE_CRASH_AT": "agent.returned@3"}
    )
    assert killed.returncode == KILLED, killed.stderr
    resumed = phasegate(repo, "run", ITEM, "--until", "specify")
    assert resumed.returncode == 0, resumed.stderr
    journal = (repo / "docs/features" / ITEM / ".journal.jsonl").read_text().splitlines()
    ended = [json.loads(x) for x in journal if '"phase.completed"' in x]
    assert [e["node"] for e in ended] == ["brainstorm", "brainstorm", "specify"]  # replayed

    result = phasegate(repo, "logs", ITEM)
    assert result.returncode == 0, result.stderr
    assert len(completions(result.stdout, "brainstorm")) == 1, result.stdout
    assert len(completions(result.stdout, "specify")) == 1, result.stdout
    started = [x for x in result.stdout.splitlines() if " specify " in x and "started" in x]
    assert len(started) == 1, result.stdout
    notes = [x for x in result.stdout.splitlines() if "resumed:" in x]
    assert len(notes) == 1 and "of the interrupted run replayed" in notes[0], result.stdout
    # The results reused are new lines, shown; --json still prints every line as recorded.
    assert "reused; not dispatched again" in result.stdout
    raw = phasegate(repo, "logs", ITEM, "--json")
    assert len(raw.stdout.splitlines()) == len(journal)


def test_a_phase_run_again_is_shown_each_time(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", approving_script())
    assert phasegate(repo, "run", ITEM, "--until", "specify").returncode == 0
    again = phasegate(repo, "run", ITEM, "--phase", "specify", "--yes")
    assert again.returncode == 0, again.stderr
    result = phasegate(repo, "logs", ITEM)
    assert len(completions(result.stdout, "specify")) == 2, result.stdout
    assert "resumed:" not in result.stdout


def test_a_run_resumed_again_and_again_still_shows_each_event_once(tmp_path: Path) -> None:
    """Killed, resumed and killed again mid-replay: each phase's lines are still shown once."""
    repo = new_repo(tmp_path / "repo", approving_script())
    for point in ("agent.returned@3", "state.before_commit@3", "agent.returned@2"):
        env = {"PHASEGATE_CRASH_AT": point, "PHASEGATE_COALESCE_SECONDS": "5"}
        killed = phasegate(repo, "run", ITEM, "--until", "create-plan", env=env)
        assert killed.returncode == KILLED, killed.stderr
    done = phasegate(repo, "run", ITEM, "--until", "create-plan")
    assert done.returncode == 0, done.stderr
    lines = (repo / "docs/features" / ITEM / ".journal.jsonl").read_text().splitlines()
    ended = [json.loads(x)["node"] for x in lines if '"phase.completed"' in x]
    assert len(ended) > 4  # replayed, some more than once

    shown = phasegate(repo, "logs", ITEM).stdout
    for phase in ("brainstorm", "specify", "design", "create-plan"):
        assert len(completions(shown, phase)) == 1, shown
        started = [x for x in shown.splitlines() if f" {phase} " in x and " started (" in x]
        assert len(started) == 1, shown
