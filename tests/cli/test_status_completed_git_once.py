"""``phasegate status NAME`` of a completed item asks git once (for the task branches its
parallel items may have left), not twice: with no worktree in ``.phasegate/worktrees``
there is none to list. What it shows is the same, a left branch included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
sys.path.insert(0, str(Path(__file__).parent))
from engine_helpers import approving_script, init_repo, make_repo
from test_status_json_git_once import _git_logging, _status

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.fanout_git import BRANCH_PREFIX, slug
from phasegate.engine.runner import RunOptions


def test_status_of_a_completed_item_starts_one_git_process(tmp_path: Path) -> None:
    repo = make_repo(init_repo(tmp_path / "repo"))
    backend = ScriptedBackend(script=approving_script())
    repo.new("one", description="Item one")
    repo.run("one", backends={"default": backend}, options=RunOptions(yes=True))
    env, log = _git_logging(tmp_path)

    entry = _status(repo.root, env, "one")
    assert isinstance(entry, dict) and entry["status"] == "completed"
    assert "taskWorktrees" not in entry
    calls = [c for c in log.read_text().splitlines() if " worktree " in c or " for-each-ref" in c]
    assert len(calls) == 1, calls

    branch = f"{BRANCH_PREFIX}/{slug('one')}/task-1"
    subprocess.run(["git", "branch", branch], cwd=repo.root, check=True, capture_output=True)
    entry = _status(repo.root, env, "one")
    assert isinstance(entry, dict)
    assert entry["taskWorktrees"] == {"paths": [], "branches": [branch]}
