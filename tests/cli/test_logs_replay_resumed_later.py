"""``phasegate logs`` after a run killed mid-replay and resumed again: a resumed run commits
each step as it replays, so the run after it may start later in the replay than it did;
each phase's lines are still shown once."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, approving_script, new_repo, phasegate

KILLED = -9


def test_a_replay_resumed_from_a_later_line_is_shown_once(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", approving_script())
    # The second run is killed after it replayed brainstorm's end, before committing it:
    # the third starts its replay at brainstorm's end, not where the second started.
    for point in ("agent.returned@3", "state.before_commit@4", "agent.returned@2"):
        env = {"PHASEGATE_CRASH_AT": point, "PHASEGATE_COALESCE_SECONDS": "5"}
        killed = phasegate(repo, "run", ITEM, "--until", "create-plan", env=env)
        assert killed.returncode == KILLED, killed.stderr
    done = phasegate(repo, "run", ITEM, "--until", "create-plan")
    assert done.returncode == 0, done.stderr

    shown = phasegate(repo, "logs", ITEM).stdout
    for phase in ("brainstorm", "specify", "design", "create-plan"):
        ended = [x for x in shown.splitlines() if f" {phase} " in x and "completed after" in x]
        assert len(ended) == 1, shown
        started = [x for x in shown.splitlines() if f" {phase} " in x and " started (" in x]
        assert len(started) == 1, shown
