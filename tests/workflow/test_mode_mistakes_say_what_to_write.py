"""Mode mistakes say what to write instead. `modes: {}` was reported as `default_mode: unknown
mode 'standard' (modes: )` at line 1, a field the file never wrote; modes without `standard`
and no `default_mode` were reported the same way. Now each is said at `modes`, with what to
write, and a misspelt `default_mode` names the mode spelt alike. `phasegate validate` refuses
each, one line naming the file, line and field, exit code 2; in the `phases:` shorthand too."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

NODES = """\
name: wf
modes:
  quick: {max_iterations: 1}
roles: {writer: {access: write}}
nodes:
  - id: done
    kind: end
"""

PHASES = """\
name: wf
modes:
  quick: {max_iterations: 1}
roles: {writer: {access: write}}
phases:
  - name: finish
    kind: finish
"""

BOTH = pytest.mark.parametrize("text", [NODES, PHASES], ids=["nodes", "phases"])


def problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, old: str, new: str
) -> list[str]:
    path = tmp_path / "wf.yaml"
    assert old in text
    path.write_text(text.replace(old, new))
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]


@BOTH
def test_no_mode_at_all(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    found = problems(tmp_path, capsys, text, "modes:\n  quick: {max_iterations: 1}", "modes: {}")
    assert found == [
        "2: modes: a workflow needs at least one mode, the review budget of its items "
        "(modes: {standard: {max_iterations: 3}})"
    ]


@BOTH
def test_no_standard_mode_and_no_default_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    found = problems(tmp_path, capsys, text, "name: wf\n", "name: wf\n")
    assert found == [
        "2: modes: no mode is named 'standard', the default_mode when none is set: set "
        "default_mode: quick (modes: quick)"
    ]


@BOTH
def test_a_misspelt_default_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    found = problems(tmp_path, capsys, text, "name: wf\n", "name: wf\ndefault_mode: quik\n")
    assert found == ["2: default_mode: unknown mode 'quik' (modes: quick); did you mean 'quick'?"]
