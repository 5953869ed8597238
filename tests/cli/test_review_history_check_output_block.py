"""``.review-history.md`` keeps a failing check's output as a block of text inside its
issue: pytest's ``=====`` lines do not turn the issue into a heading, nor does a ``---``
line in the output look like the end of the iteration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

AGENTS = """\
executor:
  "*": [{write: {"code.py": "x = 1\\n"}}]
"*":
  "*": [{verdict: {approved: true, summary: fine, issues: []}}]
"""
CHECK = "printf '.F.\\n=== FAILURES ===\\nassert 1 == 2\\n---\\nuse ```x```\\n'; exit 1"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", "PHASEGATE_AGENT_CLIS": "none"},
    )


def test_a_check_output_is_a_text_block_in_the_history(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    assert phasegate(repo, "init", "--test-command", CHECK).returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    assert phasegate(repo, "new", "a", "--mode", "hotfix", "--description", "x").returncode == 0
    folder = repo / "docs" / "features" / "a"
    (folder / "spec.md").write_text("# Spec\n\n- x is 1\n")

    ran = phasegate(repo, "run", "a", "--phase", "implement", "--yes")
    assert ran.returncode == 4, ran.stderr
    history = (folder / ".review-history.md").read_text()
    expected = (
        f"- [blocker] check 'test' ({CHECK}) failed with exit code 1: (at {CHECK})\n"
        "\n"
        "  ````text\n"
        "  .F.\n"
        "  === FAILURES ===\n"
        "  assert 1 == 2\n"
        "  ---\n"
        "  use ```x```\n"
        "  ````\n"
    )
    assert expected in history, history
    assert "\n---\n" not in history.split("**Issues:**")[1].split("**Changes Made:**")[0]
