"""The repository's own git settings do not stop a parallel foreach: the worktrees,
commits and merges it makes are plumbing, made without running the repository's hooks (a
post-checkout hook that fails, as a hook manager's can in a worktree without its tools
installed) and without signing (``commit.gpgSign``, whose key may need a person)."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import git
from parallel_helpers import Agents, fan_repo, new_item, run, worktrees

TASKS = "# Tasks\n\n- [ ] T1: One\n- [ ] T2: Two\n"


def test_failing_hooks_do_not_stop_the_loop(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    ran = tmp_path / "hooks-ran"
    hooks = root / ".git" / "hooks"
    for name in ("post-checkout", "post-commit", "post-merge"):
        hook = hooks / name
        hook.write_text(f'#!/bin/sh\necho {name} >> "{ran}"\nexit 1\n')
        hook.chmod(0o755)
    new_item(root)
    assert run(root, Agents(delay=0.0, tasks=TASKS)).status == "completed"
    assert (root / "src" / "T1.py").exists() and (root / "src" / "T2.py").exists()
    assert worktrees(root) == []
    assert not ran.exists(), ran.read_text()
    assert "phasegate-tasks" not in git(root, "branch", "-a")


def test_commit_signing_does_not_stop_the_loop(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    git(root, "config", "commit.gpgSign", "true")
    git(root, "config", "gpg.program", "false")  # no key here: signing fails
    new_item(root)
    assert run(root, Agents(delay=0.0, tasks=TASKS)).status == "completed"
    assert (root / "src" / "T1.py").exists() and (root / "src" / "T2.py").exists()
    assert worktrees(root) == []
