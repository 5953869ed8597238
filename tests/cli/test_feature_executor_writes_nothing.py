"""A feature executor that never writes spec.md (it writes a file elsewhere, put back):
specify completes at its limit with the missing artifact as its concern (seed 000), and
design is blocked (exit 4) by a line that does not claim specify made the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENTS = """\
executor:
  specify: [{write: {"spec.md": "# Spec at the wrong place\\n"}}]
  "*": [{write: {"{item_dir}/{phase}.md": "# Text\\n"}}]
"*":
  "*": [{verdict: {approved: true, summary: fine, issues: []}}]
"""
LINE = (
    "phasegate: error: cannot start design: spec.md, which the specify phase makes, is "
    "missing or empty though that phase completed; put it back, or run the specify phase "
    "again: phasegate run a --phase specify"
)


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "PHASEGATE_AGENT_CLIS": "none"},
    )


def test_a_spec_never_written_blocks_design_without_saying_it_was_made(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    assert phasegate(repo, "init").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    assert phasegate(repo, "new", "a", "--description", "x").returncode == 0

    result = phasegate(repo, "run", "a")
    assert result.returncode == 4, result.stderr
    assert result.stderr.strip().splitlines()[-1] == LINE
    assert not (repo / "spec.md").exists()
    meta = json.loads((repo / "docs/features/a/.meta.json").read_text())
    specify = meta["phases"]["specify"]
    assert specify["completed"]
    assert specify["reviewerNotes"] == [
        "[blocker] The artifact docs/features/a/spec.md is missing or empty."
    ]
    shown = phasegate(repo, "status", "a").stdout
    assert f"Blocked: {LINE.removeprefix('phasegate: error: ')}" in shown, shown
