"""`run --help` sends a user to `phasegate workflows` for the phases `--phase` takes:
what it lists as phases are those, and a workflow's labelled ends are listed apart."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code, _, err = cli_in_process(capsys, "init", "--example", "review-loop", "-C", str(tmp_path))
    assert code == 0, err
    code, _, err = cli_in_process(capsys, "new", "limits", "-w", "review-loop", "-C", str(tmp_path))
    assert code == 0, err
    return tmp_path


def refused_phases(capsys: pytest.CaptureFixture[str], repo: Path, phase: str) -> list[str]:
    """The phases `run --phase PHASE`'s refusal lists."""
    code, _, err = cli_in_process(capsys, "run", "limits", "--phase", phase, "-C", str(repo))
    assert code == 2, err
    found = re.search(r"\(phases: ([^)]*)\)", err)
    assert found, err
    return found.group(1).split(", ")


def test_the_listed_phases_are_the_ones_run_takes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    takes = refused_phases(capsys, repo, "nosuch")
    assert takes == ["planning", "deciding", "implementing"]
    code, out, _ = cli_in_process(capsys, "workflows", "-C", str(repo))
    assert code == 0
    line = next(line for line in out.splitlines() if "phases:" in line and "planning" in line)
    assert line.strip() == "phases: planning → deciding → implementing; ends: done, dropped"
    code, out, _ = cli_in_process(capsys, "workflows", "--json", "-C", str(repo))
    (row,) = [row for row in json.loads(out) if row["name"] == "review-loop"]
    assert row["phases"] == takes
    assert row["ends"] == ["done", "dropped"]


def test_an_end_it_lists_is_refused_as_an_end(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli_in_process(capsys, "run", "limits", "--phase", "done", "-C", str(repo))
    assert code == 2
    assert "'done' is an end of workflow 'review-loop', not a phase to run" in err
