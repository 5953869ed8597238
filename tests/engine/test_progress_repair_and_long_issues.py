"""Run progress stays readable: a parallel item's merge-conflict repair says what it does
and names its item on every line, and a reviewer's very long issue is clipped in the
progress line (the review history keeps it whole)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from parallel_helpers import ITEM, fan_repo, new_item
from rich.console import Console
from test_parallel_conflict_stop import clashing

from phasegate.api import open_repo
from phasegate.cli.progress import ProgressPrinter
from phasegate.engine.runner import RunOptions
from phasegate.errors import WaitingForHuman


def test_a_repair_call_names_its_item_and_what_it_does(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", extra="    conflicts: {attempts: 1}\n")
    new_item(root)
    agents = clashing()
    out = io.StringIO()
    printer = ProgressPrinter(Console(file=out, width=400, color_system=None))
    with pytest.raises(WaitingForHuman, match="conflict-T2"):
        open_repo(root).run(
            ITEM, backends={"default": agents.backend()}, options=RunOptions(), sink=printer
        )
    printer.close()
    lines = out.getvalue().splitlines()
    (asked,) = [i for i, line in enumerate(lines) if "resolving the merge conflict" in line]
    assert lines[asked].startswith("[T2] repair 1: coder (scripted) resolving the merge conflict")
    done = [line for line in lines[asked + 1 :] if " coder done in " in line]
    assert done and done[0].startswith("[T2] coder done in "), lines[asked:]


AGENTS = """\
executor:
  "*": [{{write: {{"{{item_dir}}/brainstorm.md": "# Brainstorm\\n\\nA limit.\\n"}}}}]
"*":
  "*":
    - verdict:
        approved: false
        summary: no
        issues: [{{severity: blocker, description: "{issue}"}}]
"""


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


def test_a_huge_issue_is_clipped_in_the_progress_line(tmp_path: Path) -> None:
    issue = "The limiter drops requests " + "and more words " * 400 + "END-OF-ISSUE"
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    assert phasegate(repo, "init").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS.format(issue=issue))
    assert phasegate(repo, "new", "a", "--description", "x").returncode == 0
    ran = phasegate(repo, "run", "a", "--until", "brainstorm", "--yes")
    # The progress lines of the review iterations and of the phase's end.
    shown = [x for x in ran.stderr.splitlines() if x.startswith("      - [blocker] ")]
    assert len(shown) == 4, ran.stderr
    for line in shown:
        assert line.startswith("      - [blocker] The limiter drops requests"), line
        assert len(line) < 400 and line.endswith("…") and "END-OF-ISSUE" not in line
    history = (repo / "docs" / "features" / "a" / ".review-history.md").read_text()
    assert "END-OF-ISSUE" in history
