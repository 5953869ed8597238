"""An item's own worktree removed and its folder made again by hand (no ``.git`` file in
it) is not taken for the item's checkout: ``run`` stops with one line saying how to make it
again, instead of working in a tree where every file of the branch counts as deleted."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import git
from parallel_helpers import fan_repo

from cli_process import run_cli
from phasegate.errors import ExitCode


def test_a_plain_folder_in_place_of_the_worktree_is_refused(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", config="version: 1\nroles: {default: {backend: auto}}\n")
    assert run_cli(root, "new", "w1", "-w", "fan", "-d", "x", "--worktree").returncode == 0
    where = root / ".phasegate" / "worktrees" / "w1"
    shutil.rmtree(where)
    where.mkdir()
    (where / "notes.txt").write_text("mine\n")

    ran = run_cli(root, "run", "w1")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stdout + ran.stderr
    (line,) = ran.stderr.strip().splitlines()
    assert ".phasegate/worktrees/w1 of work item 'w1' is not a git checkout" in line
    assert "git worktree add .phasegate/worktrees/w1 phasegate/w1" in line
    assert (where / "notes.txt").read_text() == "mine\n"
    assert not (where / ".git").exists()
    assert "README.md" in git(root, "ls-files")
