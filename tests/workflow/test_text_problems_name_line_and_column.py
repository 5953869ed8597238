"""A placeholder problem in a workflow's own text (a gate's question, a choice's description) is
said at its line and column in the workflow file, as one in a prompt template is: on the text's
own line for a `|` block, after the opening quote for a quoted text. `phasegate validate` says
it, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    question: |
      Go on with this?

      Read the notes of {{ itme }} first.
    choices:
      go: {to: done, description: "Ship {{ item }} in {{ mdoe }}"}
      stop:
        to: done
        description: Not yet {{ item and go
  - id: done
    kind: end
"""
KNOWN = "description, item, item_dir, label, mode, phase, workflow"


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> list[str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [line for line in err.splitlines() if line.startswith(f"{path}:")]


def test_each_problem_names_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    assert problems(tmp_path, capsys, WORKFLOW) == [
        f"{path}:11:25: nodes[0].question: unknown placeholder 'itme' (known here: {KNOWN}); "
        "did you mean 'item'?",
        f"{path}:13:55: nodes[0].choices.go.description: unknown placeholder 'mdoe' "
        f"(known here: {KNOWN}); did you mean 'mode'?",
        f"{path}:16:30: nodes[0].choices.stop.description: '{{{{ item and go' is not "
        "closed with '}}'",
    ]


def test_a_block_indented_deeper_counts_its_indent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("      Read the", "          Read the")
    found = problems(tmp_path, capsys, text)
    assert found[0].startswith(f"{tmp_path / 'wf.yaml'}:11:29: nodes[0].question: "), found


def test_a_folded_text_names_the_field_line_when_the_place_is_not_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folded (`>`) text's lines are not the file's: where two of its lines read the
    same from the placeholder on, its field's line is said."""
    text = WORKFLOW.replace("question: |", "question: >").replace(
        "      Read the notes of {{ itme }} first.", "      {{ itme }}\n      {{ itme }}"
    )
    found = problems(tmp_path, capsys, text)
    assert found[0].startswith(
        f"{tmp_path / 'wf.yaml'}:8: nodes[0].question: unknown placeholder 'itme'"
    ), found
