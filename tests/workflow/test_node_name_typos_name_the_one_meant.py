"""A misspelt node id is said with the node spelt alike wherever a node is named, not only in
`on`: the workflow's `start`, a mode's `start` and `skip`, a command's `start` and a node's
`also`. `phasegate validate` refuses each, one line naming the file, line and field, with the
nodes there are and the one meant, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes:
  standard: {max_iterations: 2}
roles: {writer: {access: write}}
nodes:
  - id: write
    executor: writer
  - id: review
    executor: writer
  - id: done
    kind: end
"""

MEANT = "unknown node 'wirte' (write, review, done); did you mean 'write'?"


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> list[str]:
    path = tmp_path / "wf.yaml"
    assert old in WORKFLOW
    path.write_text(WORKFLOW.replace(old, new))
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True)
    for name in ("write", "review"):
        (prompts / f"{name}.md").write_text("Do it.\n")
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]


def test_the_workflow_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = problems(tmp_path, capsys, "name: wf\n", "name: wf\nstart: wirte\n")
    assert found == [f"2: start: {MEANT}"]


def test_a_mode_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = problems(tmp_path, capsys, "{max_iterations: 2}", "{max_iterations: 2, start: wirte}")
    assert found == [f"3: modes.standard.start: {MEANT}"]


def test_a_mode_skip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = problems(tmp_path, capsys, "{max_iterations: 2}", "{max_iterations: 2, skip: [wirte]}")
    assert found == [f"3: modes.standard.skip[0]: {MEANT}"]


def test_a_command_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = problems(tmp_path, capsys, "nodes:\n", "commands:\n  go: {start: wirte}\nnodes:\n")
    assert found == [f"6: commands.go.start: {MEANT}"]


def test_a_node_also(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = problems(tmp_path, capsys, "  - id: review\n", "    also: [wirte]\n  - id: review\n")
    assert found == [f"8: nodes[0].also[0]: {MEANT}"]
