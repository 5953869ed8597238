"""A problem inside a folded (`>`) block, a gate's `question: >` with a misspelt
placeholder or a character YAML does not allow, is said at the line of the file where it
is, not only at the field's line. `phasegate validate` says it, exit code 2."""

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
  - id: ask
    kind: gate
    question: >
      Is this
      ready for {{ itme }}? Read
      the notes first.
    choices:
      yes: {to: done, description: Ship it}
      no: done
  - id: done
    kind: end
"""


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> list[str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert "Traceback" not in err
    return [line.removeprefix(f"{path}:") for line in err.splitlines() if str(path) in line]


def test_a_placeholder_in_a_folded_text_names_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, WORKFLOW)
    assert len(found) == 2, found  # the problem, and the summary line naming the file
    assert found[0].startswith("9:17: nodes[0].question: unknown placeholder 'itme'"), found


@pytest.mark.parametrize("block", [">", "|"])
def test_a_control_character_in_a_block_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], block: str
) -> None:
    text = WORKFLOW.replace("question: >", f"question: {block}").replace(
        "the notes first.", "the notes\x07 first."
    )
    found = problems(tmp_path, capsys, text)
    assert found[0] == (
        "10:16: invalid YAML: found character U+0007, which YAML does not allow in a file: "
        "delete it (or write it as an escape in a double-quoted text)"
    ), found
