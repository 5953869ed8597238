"""Ctrl-D at "Remove the worktree?" (a finished item's worktree, its branch merged) keeps
the worktree, and the journal says so as for any other answer (``worktree.finish``,
``removed: false``): ``logs`` tells what happened, the command stops with exit 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from phasegate.errors import ExitCode

sys.path.insert(0, str(Path(__file__).parent.parent))
from pty_terminal import Terminal

PLAIN = {"TERM": "dumb", "NO_COLOR": "1"}

AGENTS = """\
executor:
  brainstorm: [{write: {"{item_dir}/brainstorm.md": "b"}, text: ok}]
  specify: [{write: {"{item_dir}/spec.md": "s"}, text: ok}]
  design: [{write: {"{item_dir}/design.md": "d"}, text: ok}]
  create-plan: [{write: {"{item_dir}/plan.md": "p"}, text: ok}]
  create-tasks: [{write: {"{item_dir}/tasks.md": "t"}, text: ok}]
  implement: [{text: nothing needed changing}]
  verify: [{write: {"{item_dir}/verification.md": "v"}, text: ok}]
"*":
  "*": [{verdict: {approved: true, summary: fine, issues: []}}]
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_ctrl_d_at_removing_the_worktree_is_journaled_as_kept(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "i")
    assert cli(repo, "init").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "setup")
    made = cli(repo, "new", "y", "--workflow", "feature", "--mode", "hotfix", "--worktree")
    assert made.returncode == 0, made.stderr
    worktree = ".phasegate/worktrees/y"

    terminal = Terminal(repo, "run", "y", env=PLAIN)
    terminal.wait_for("Remove the worktree")
    os.write(terminal.leader, b"\x04")
    terminal.wait_for("phasegate: ", timeout=60)
    assert terminal.finish() == ExitCode.WAITING
    assert (repo / worktree).is_dir()

    journal = cli(repo, "logs", "y", "--json")
    assert journal.returncode == 0, journal.stderr
    events = [json.loads(line) for line in journal.stdout.splitlines()]
    (finish,) = [e for e in events if e["event"] == "worktree.finish"]
    assert finish["removed"] is False and finish["branch"] == "phasegate/y"
    assert "no answer" in finish["message"] and "kept" in finish["message"]
    assert finish["message"].endswith("remove it with: phasegate worktree remove y")
    completed = next(i for i, e in enumerate(events) if e["event"] == "item.completed")
    assert events.index(finish) > completed
    shown = cli(repo, "logs", "y")
    (line,) = [x for x in shown.stdout.splitlines() if "worktree:" in x]
    assert f"no answer to removing worktree {worktree}" in line and "kept" in line
