"""``status NAME`` of an item whose run was killed after its journal recorded a move and
before its state file did: the state file says brainstorm, the journal says the run went
on to specify. status says so (where the next run catches up), not only that brainstorm
was interrupted; ``--json`` names the nodes in ``inProgress.journalAhead``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_resume_lagging_partial_fresh import killed_in_specify
from test_resume_lagging_state import ITEM, run

pytestmark = pytest.mark.slow


def test_status_says_where_the_journal_says_the_killed_run_went_on_to(tmp_path: Path) -> None:
    repo, _ = killed_in_specify(tmp_path / "repo")
    shown = run(repo, "status", ITEM, env={})
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "interrupted" in text, text
    assert "its journal records that the run went on to specify before it ended" in text, text
    assert "the next run catches up there first" in text, text
    data = json.loads(run(repo, "status", ITEM, "--json", env={}).stdout)
    assert data["inProgress"]["interrupted"] is True, data["inProgress"]
    assert data["inProgress"]["journalAhead"] == ["specify"], data["inProgress"]
    # Once a run caught up, the state is no longer behind: nothing more is said.
    done = run(repo, "run", ITEM, "--until", "specify", env={})
    assert done.returncode == 0, done.stdout + done.stderr
    after = json.loads(run(repo, "status", ITEM, "--json", env={}).stdout)
    assert "journalAhead" not in (after.get("inProgress") or {}), after
