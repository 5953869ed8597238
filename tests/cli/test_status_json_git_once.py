"""``phasegate status --json`` asks git about task worktrees and branches once for all the
ended items (at most two git processes), not twice per item, and shows each item exactly what
``status NAME --json`` shows for it (the task branches one item left included)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.fanout_git import BRANCH_PREFIX, slug
from phasegate.engine.runner import RunOptions


def _git_logging(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` logs its arguments, then runs the real git."""
    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git.log"
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}")
    return env, log


def _status(root: Path, env: dict[str, str], *args: str) -> object:
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "status", *args, "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def test_status_json_lists_task_worktrees_with_two_git_processes(tmp_path: Path) -> None:
    repo = make_repo(init_repo(tmp_path / "repo"))
    backend = ScriptedBackend(script=approving_script())
    names = ("one", "two", "three")
    for name in names:
        repo.new(name, description=f"Item {name}")
        repo.run(name, backends={"default": backend}, options=RunOptions(yes=True))
    branch = f"{BRANCH_PREFIX}/{slug('two')}/task-1"
    subprocess.run(["git", "branch", branch], cwd=repo.root, check=True, capture_output=True)
    env, log = _git_logging(tmp_path)

    entries = _status(repo.root, env)
    assert isinstance(entries, list)
    assert [entry["status"] for entry in entries] == ["completed"] * 3
    calls = log.read_text().splitlines()
    # No folder in .phasegate/worktrees: no worktree to list, git is not asked for them.
    assert sum(" worktree list" in call for call in calls) == 0, calls
    assert sum(" for-each-ref" in call for call in calls) == 1, calls

    by_name = {entry["id"]: entry for entry in entries}
    assert by_name["two"]["taskWorktrees"] == {"paths": [], "branches": [branch]}
    assert "taskWorktrees" not in by_name["one"]
    for name in names:
        assert _status(repo.root, env, name) == by_name[name]
