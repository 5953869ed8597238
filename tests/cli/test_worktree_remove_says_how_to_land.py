"""``phasegate worktree remove`` refusing a worktree whose work would be lost says how to
land it: commit what is uncommitted there, then merge the branch (not just "merge first",
which git refuses while the changes are uncommitted)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import git
from parallel_helpers import fan_repo

from cli_process import run_cli
from phasegate.errors import ExitCode


def test_refusal_names_the_commit_and_the_merge(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    assert run_cli(root, "new", "w1", "-w", "fan", "-d", "x", "--worktree").returncode == 0
    where = root / ".phasegate" / "worktrees" / "w1"
    (where / "new.py").write_text("X = 1\n")
    head = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()

    refused = run_cli(root, "worktree", "remove", "w1")
    assert refused.returncode == ExitCode.BAD_INPUT
    (line,) = refused.stderr.strip().splitlines()
    assert "1 uncommitted change(s) in .phasegate/worktrees/w1" in line
    assert "commit them there" in line
    assert f"merge branch phasegate/w1 into {head} (git merge phasegate/w1)" in line
    assert where.is_dir()

    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", "work")
    refused = run_cli(root, "worktree", "remove", "w1")
    assert refused.returncode == ExitCode.BAD_INPUT
    (line,) = refused.stderr.strip().splitlines()
    assert "commit them" not in line
    assert f"merge branch phasegate/w1 into {head} (git merge phasegate/w1)" in line

    git(root, "merge", "-q", "phasegate/w1")
    removed = run_cli(root, "worktree", "remove", "w1")
    assert removed.returncode == 0, removed.stderr
    assert not where.exists()
