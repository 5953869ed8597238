"""A task's implementer never reviews its own work (seed 004: the implementer is
excluded from reviewer selection): with no other agent the run stops (exit 2)."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import PLAN, cli, git, make_repo

ONE_AGENT_PLAN = """# Plan

## Phase 1: Core

- [ ] **Create module a** [`agent: the-developer`]
"""

SCRIPT = """\
implementer:
  "*":
    - write: {"src/{task}.py": "x\\n"}
"*":
  "*":
    - verdict: {verdict: APPROVED, summary: ok, issues: []}
"""


def _repo(tmp_path: Path) -> Path:
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        "commands": {"test": "true"},
    }
    root = make_repo(tmp_path / "repo", ONE_AGENT_PLAN, agents=("the-developer",), config=config)
    (root / ".phasegate" / "agents.yaml").write_text(SCRIPT)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "script")
    return root


def test_the_only_agent_never_reviews_its_own_work(tmp_path: Path) -> None:
    """One agent, which implements the task: no review by itself; one line, exit 2."""
    root = _repo(tmp_path)
    done = cli(root, "implement", "006", "-q")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    message = lines[-1]
    assert "Create module a" in message
    assert "the-developer" in message and "implementer" in message
    assert "review: false" in message
    # Refused before the work item is made: no item, so no reviewer was ever chosen.
    assert not (root / ".phasegate" / "implement" / "006").exists()
    assert "- [ ] **Create module a**" in (root / PLAN).read_text()


def test_adding_a_second_agent_lets_the_run_go_on(tmp_path: Path) -> None:
    """The way out the message names works: add an agent, run again."""
    root = _repo(tmp_path)
    assert cli(root, "implement", "006", "-q").returncode == 2
    (root / ".claude" / "agents" / "the-architect.md").write_text(
        "---\nname: the-architect\ndescription: Reviews architecture\n---\nYou review.\n"
    )
    done = cli(root, "implement", "006", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "- [x] **Create module a**" in (root / PLAN).read_text()
