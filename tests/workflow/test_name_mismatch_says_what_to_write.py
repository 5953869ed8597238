"""A workflow whose `name` is not its file's name does not load: `phasegate validate` says so
at the `name` line and what to write instead (rename the file, or write the file's name),
exit 2; in the `phases:` shorthand too, and for a file whose name is no workflow name only
the rename is offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

NODES = """\
name: review
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: done
    kind: end
"""

PHASES = """\
name: review
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
phases:
  - name: finish
    kind: finish
"""


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, text: str) -> list[str]:
    path = tmp_path / file
    path.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]


@pytest.mark.parametrize("text", [NODES, PHASES], ids=["nodes", "phases"])
def test_the_name_line_says_what_to_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    assert problems(tmp_path, capsys, "review-loop.yaml", text) == [
        "1: name: name 'review' must match the file name 'review-loop' (rename the file to "
        "review.yaml, or write name: review-loop)"
    ]


def test_a_file_name_that_is_no_workflow_name_is_only_told_to_rename(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert problems(tmp_path, capsys, "My Review.yaml", NODES) == [
        "1: name: name 'review' must match the file name 'My Review' (rename the file to "
        "review.yaml)"
    ]
