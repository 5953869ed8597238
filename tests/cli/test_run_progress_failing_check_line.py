"""A feature implement whose test check fails: the run's progress shows the check's
concern with the first line of its output (the concern's own first line only introduces
it, ``... failed with exit code 3:``), as ``status`` does, never a line ending in ``:``."""

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
CHECK = "echo 'assert 2 == 3 in test_sum'; exit 3"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "300", "PHASEGATE_AGENT_CLIS": "none"},
    )


def test_a_failing_check_is_shown_with_its_output(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    assert phasegate(repo, "init", "--test-command", CHECK).returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    assert phasegate(repo, "new", "a", "--mode", "hotfix", "--description", "x").returncode == 0
    (repo / "docs" / "features" / "a" / "spec.md").write_text("# Spec\n\n- x is 1\n")

    ran = phasegate(repo, "run", "a", "--phase", "implement", "--yes")
    assert ran.returncode == 4, ran.stderr
    shown = ran.stdout + ran.stderr
    concern = f"check 'test' ({CHECK}) failed with exit code 3: assert 2 == 3 in test_sum"
    lines = [line.strip() for line in shown.splitlines()]
    assert f"- [blocker] {concern}" in lines, shown
    assert not [line for line in lines if line.startswith("- ") and line.endswith(":")], shown


def test_a_padded_output_line_is_shown_on_one_short_line(tmp_path: Path) -> None:
    """pytest -q's first line (``.F.`` padded to the terminal's width) is shown as words."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    padded = "printf '.F.%40s[100%%]\\n1 failed\\n' ''; exit 1"
    assert phasegate(repo, "init", "--test-command", padded).returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    assert phasegate(repo, "new", "a", "--mode", "hotfix", "--description", "x").returncode == 0
    (repo / "docs" / "features" / "a" / "spec.md").write_text("# Spec\n\n- x is 1\n")

    ran = phasegate(repo, "run", "a", "--phase", "implement", "--yes")
    assert ran.returncode == 4, ran.stderr
    lines = [line.strip() for line in (ran.stdout + ran.stderr).splitlines()]
    shown = [line for line in lines if line.startswith("- [blocker] check 'test'")]
    assert shown and all(line.endswith("failed with exit code 1: .F. [100%]") for line in shown), (
        lines
    )
