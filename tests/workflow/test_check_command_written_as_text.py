"""A check node's `run` (and an agent node's `checks`) is a list: a command written as the
value itself (`run: pytest -q`) is refused with the list form that runs it, one line naming
the file, line and field, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: t
    kind: check
    run: pytest -q
    on: {fail: done}
  - id: done
    kind: end
"""


def test_a_command_as_the_value_of_run_shows_the_list_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert (
        f"{path}:7: nodes[0].run: should be a list, not a string ('pytest -q'): "
        '[{name: check, run: "pytest -q"}], or a list of configured command names'
    ) in err.splitlines(), err
