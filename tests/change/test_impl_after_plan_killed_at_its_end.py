"""``impl`` after a ``plan`` killed once it had moved on to ``challenged`` but before its
state commit said so: the journal says the plan is done, so ``impl`` goes on, instead of
being refused with "the change is in phase proposed. Next: phasegate plan ID"."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from test_change_resume import calls, run

from phasegate.engine.state import read_state_file

FOLDER = Path("changes") / "add-oauth"


def test_impl_goes_on_after_a_plan_killed_after_its_last_move(repo: Path) -> None:
    # The 36th line is the plan's last (label.changed, after the move tasks -> challenged).
    killed = run(repo, "plan", crash_at="journal.after_append@36")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    lines = (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    moves = [json.loads(line) for line in lines if '"node.transition"' in line]
    assert (moves[-1]["node"], moves[-1]["to"]) == ("tasks", "challenged")
    state = read_state_file(repo / FOLDER / ".engine.json")
    assert state.at == "tasks", "the state file does not lag the journal: nothing to test"
    planned = len(calls(repo))

    resumed = run(repo, "impl")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "complete"
    assert "Next: phasegate plan" not in resumed.stderr
    # The plan's agents were not called again: only impl's.
    assert all(role != "challenger" for role, _ in calls(repo)[planned:])
