"""`make demo`: the whole feature workflow on a sample project, offline, as a user sees it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_runs_the_whole_feature_workflow(tmp_path: Path) -> None:
    """A rejection and revision, a failing check fixed, a hard block shown, and the end state."""
    target = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "phasegate.demo", str(target)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "cannot start implement: spec.md is missing or empty (hard prerequisite)" in out
    assert "(exit code 4, as expected)" in out
    assert "iteration 1: not approved (1 blocker(s))" in out
    assert "not approved (checks failed)" in out
    assert "rate-limit complete" in out
    state = json.loads((target / "docs/features/rate-limit/.meta.json").read_text())
    assert state["status"] == "completed"
    assert state["phases"]["specify"]["iterations"] == 2
    assert state["phases"]["implement"]["iterations"] == 2
    assert not (target / "docs/features/rate-limit/.review-history.md").exists()
    assert "min(self.capacity" in (target / "ratelimit/bucket.py").read_text()
    assert str(target) in out  # it says where the files are


def test_demo_writes_no_escape_codes_to_a_pipe(tmp_path: Path) -> None:
    """Its headings and every command it shows are plain text in a log file or a pipe."""
    result = subprocess.run(
        [sys.executable, "-m", "phasegate.demo", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== Create a work item under the feature workflow" in result.stdout
    assert "\x1b" not in result.stdout + result.stderr
