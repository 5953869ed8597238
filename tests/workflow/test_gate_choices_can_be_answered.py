"""A gate is answered by a choice's name, `CHOICE: note` adding a note: a choice named with a
`:`, empty, or padded with spaces could never be answered, and an empty question asks nothing.
`phasegate validate` refuses each, one line naming the file, line and field, exit code 2."""

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
    question: Ship it?
    choices: {yes: done, CHOICE: done}
  - id: done
    kind: end
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    return code, out + err


@pytest.mark.parametrize("name", ['"no: not now"', '""', '" later"'])
def test_a_choice_that_could_never_be_answered_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("CHOICE", name))
    assert code == ExitCode.BAD_INPUT, said
    shown = name.strip('"')
    assert (
        f"{tmp_path / 'wf.yaml'}:8: nodes[0].choices: choice {shown!r} could never be answered: "
        "a choice is answered by its name ('CHOICE: note' adds a note), so it is not empty, "
        "holds no ':' and has no spaces around it"
    ) in said.splitlines(), said


def test_an_empty_question_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = WORKFLOW.replace("CHOICE", "no").replace("question: Ship it?", 'question: "  "')
    code, said = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, said
    assert (
        f"{tmp_path / 'wf.yaml'}:7: nodes[0].question: a gate's question cannot be empty: it is "
        "what a person is asked"
    ) in said.splitlines(), said


@pytest.mark.parametrize("name", ["no", "not-now", "looks_good", "Looks-Good"])
def test_answerable_choices_are_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("CHOICE", name))
    assert code == 0, said
