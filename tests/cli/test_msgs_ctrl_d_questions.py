"""Ctrl-D (the end of the terminal's input) at a question the CLI asks outside a gate:
removing a finished item's worktree, implementing a planned change now. As at a gate's
prompt, the command stops with exit 3 and one line naming the question and the command
that does it later; what was recorded stays."""

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

CHANGE_AGENTS = """\
proposal-author:
  proposal: [{write: {"{item_dir}/proposal.md": "---\\nchange_id: add-oauth\\nspecs: []\\n---\\n# Proposal\\nOAuth.\\n"}}]
  tasks: [{write: {"{item_dir}/tasks.md": "## 1. Data Layer\\n- [ ] 1.1 token model\\n"}}]
challenger:
  tasks: [{json: {verdict: APPROVED, summary: ok, issues: []}}]
"""  # noqa: E501

CHANGE_CONFIG = """\
roles: {default: {backend: scripted}}
backends: {scripted: {script: .phasegate/agents.yaml}}
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a script runs it: no terminal."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def repository(root: Path) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "commit", "-q", "--allow-empty", "-m", "i")
    return root


def ctrl_d_at(terminal: Terminal, question: str) -> tuple[int, str]:
    """Ctrl-D once ``question`` is asked: the exit code and the one line that follows."""
    terminal.wait_for(question)
    os.write(terminal.leader, b"\x04")
    before = terminal.wait_for("phasegate: ", timeout=60)
    line = "phasegate: " + terminal.wait_for("\n", timeout=30).strip()
    code = terminal.finish()
    assert before.count("phasegate: ") == 1, before
    assert "aborted" not in line and "Traceback" not in before, before + line
    return code, line


def test_ctrl_d_at_removing_a_finished_items_worktree(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    assert cli(repo, "init").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "setup")
    made = cli(repo, "new", "y", "--workflow", "feature", "--mode", "hotfix", "--worktree")
    assert made.returncode == 0, made.stderr
    worktree = ".phasegate/worktrees/y"

    terminal = Terminal(repo, "run", "y", env=PLAIN)
    code, line = ctrl_d_at(terminal, "Remove the worktree")
    assert code == ExitCode.WAITING, line
    question = f"Branch phasegate/y is merged. Remove the worktree {worktree}? (the branch is kept)"
    assert f'no answer to "{question}"' in line, line
    assert "the terminal's input ended" in line, line
    assert line.endswith("to do it later: phasegate worktree remove y"), line

    # Nothing recorded is lost: the item is complete, its worktree kept.
    shown = cli(repo, "status", "y", "--json")
    assert json.loads(shown.stdout)["status"] == "completed", shown.stderr
    assert (repo / worktree).is_dir()
    removed = cli(repo, "worktree", "remove", "y")
    assert removed.returncode == 0, removed.stderr
    assert not (repo / worktree).exists()


def test_ctrl_d_at_implementing_a_planned_change_now(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    (repo / ".phasegate").mkdir()
    (repo / ".phasegate" / "agents.yaml").write_text(CHANGE_AGENTS)
    (repo / ".phasegate" / "config.yaml").write_text(CHANGE_CONFIG)

    terminal = Terminal(repo, "plan", "add-oauth", "Add OAuth login", env=PLAIN)
    code, line = ctrl_d_at(terminal, "Implement now, or view the plan?")
    assert code == ExitCode.WAITING, line
    assert 'no answer to "Implement now, or view the plan?"' in line, line
    assert line.endswith("to do it later: phasegate impl add-oauth"), line

    listed = cli(repo, "change", "list")
    assert listed.returncode == 0, listed.stderr
    assert "challenged" in listed.stdout and "phasegate impl add-oauth" in listed.stdout
