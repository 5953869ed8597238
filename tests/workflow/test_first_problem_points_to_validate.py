"""A command loading a user's workflow that has several problems (`phasegate new`) shows the
first and says how many more there are and which command lists them all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: true}}
roles: {writer: {acess: write}}
nodes:
  - id: write
    executor: writer
    outputs: [notes.md]
  - id: done
    kind: end
"""


def test_new_names_the_command_listing_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    path = repo / ".phasegate" / "workflows" / "wf.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(WORKFLOW)
    code, out, err = cli(capsys, "new", "one", "--workflow", "wf", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT, out + err
    assert err.strip() == (
        f"phasegate: error: {path}:3: modes.standard.max_iterations: should be a whole number, "
        f"not true/false (and 1 more: phasegate validate {path} lists them)"
    ), err
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT
    assert len([line for line in err.splitlines() if line.startswith(f"{path}:")]) == 2, err
