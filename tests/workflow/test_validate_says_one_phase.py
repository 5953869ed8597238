"""`phasegate validate` of a workflow of one phase says `1 phase`, not `1 phases`."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    question: Ship it?
    choices: {yes: done, no: done}
  - id: done
    kind: end
"""


def test_one_phase_is_said_as_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0, out + err
    assert f"{path}: ok: workflow 'wf', 1 phase, 2 nodes, modes standard" in out, out
