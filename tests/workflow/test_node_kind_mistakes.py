"""A node's `kind` misspelt says the kind it resembles; a `kind` that is no word at all (left
empty, a mapping) is said in the YAML's words, not as Python's `None` or `{'x': 1}`."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

HEAD = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: odd
"""
KINDS = "agent, gate, foreach, check, action, end"


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("agnet", f"unknown node kind 'agnet' (kinds: {KINDS}); did you mean 'agent'?"),
        ("gates", f"unknown node kind 'gates' (kinds: {KINDS}); did you mean 'gate'?"),
        ("zebra", f"unknown node kind 'zebra' (kinds: {KINDS})"),
        ("", f"a node's kind is one of {KINDS} (or left out: agent), not empty"),
        ("{x: 1}", f"a node's kind is one of {KINDS} (or left out: agent), not a mapping"),
    ],
)
def test_a_wrong_kind_is_said_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, message: str
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(f"{HEAD}    kind: {kind}\n")
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert f"{path}:6: nodes[0]: {message}" in err.splitlines(), err
