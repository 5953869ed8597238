"""``phasegate worktree remove ITEM`` never loses commits made in the item's worktree off
its branch (a detached HEAD), and names a branch that is gone as such (not as commits
to merge with a ``git merge`` that cannot work)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli
from phasegate.errors import ExitCode

WT = ".phasegate/worktrees/w1"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(
        root,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "0",
    )
    made = run_cli(root, "new", "w1", "-w", "feature", "-d", "x", "--worktree")
    assert made.returncode == 0, made.stderr
    return root


def test_commits_on_a_detached_head_keep_the_worktree(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    where = root / WT
    git(where, "checkout", "-q", "--detach")
    (where / "work.txt").write_text("precious\n")
    git(where, "add", "work.txt")
    git(where, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "precious")
    commit = git(where, "rev-parse", "HEAD")

    refused = run_cli(root, "worktree", "remove", "w1")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert f"1 commit(s) in {WT} not merged into main (it is not on branch phasegate/w1)" in line
    assert "git switch -c phasegate/w1" in line and "git merge" not in line
    assert (where / "work.txt").exists()
    assert git(where, "rev-parse", "HEAD") == commit


def test_a_deleted_branch_is_named(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    where = root / WT
    git(where, "checkout", "-q", "-b", "other")
    git(root, "branch", "-D", "phasegate/w1")

    refused = run_cli(root, "worktree", "remove", "w1")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "its branch phasegate/w1 is gone" in line
    assert "git merge" not in line
    forced = run_cli(root, "worktree", "remove", "w1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "branch phasegate/w1 was gone already" in forced.stdout
