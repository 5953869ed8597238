"""A text that starts with a placeholder (`question: {{ item }} is ready?`) is, to YAML, a
mapping: unquoted it is invalid YAML, or a mapping where a text goes. One that starts with a
quote and goes on after it (`question: "{{ item }}" is ready?`) is invalid YAML too. Each is
refused naming the file and line, and says how to write it: the whole text in quotes."""

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
    question: Ready?
    choices:
      yes: {to: done, description: Ship it}
      no: done
  - id: done
    kind: end
"""
QUOTE_IT = (
    "a text that starts with '{{' is read as a YAML mapping: put the whole text in quotes "
    '(e.g. "{{ item }} is ready?")'
)


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> list[str]:
    path = tmp_path / "wf.yaml"
    assert old in WORKFLOW
    path.write_text(WORKFLOW.replace(old, new))
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ("question: Ready?", "question: {{ item }} is ready?", "7:26"),
        ("description: Ship it}", "description: {{ item }} ships}", "9:47"),
    ],
)
def test_a_text_starting_with_a_placeholder_says_to_quote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, line: str
) -> None:
    found = problems(tmp_path, capsys, old, new)
    assert len(found) == 1, found
    assert found[0].startswith(f"{line}: invalid YAML: "), found
    assert found[0].endswith(f"; {QUOTE_IT}"), found


def test_a_whole_placeholder_read_as_a_mapping_says_to_quote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "question: Ready?", "question: {{ item }}")
    assert found == [
        "7: nodes[0].question: should be a string, not a mapping: a text that starts with '{{' "
        "is read as a YAML mapping; put the whole text in quotes "
        '(e.g. "{{ item }} is ready?")'
    ]


def test_a_text_going_on_after_its_closing_quote_says_to_quote_it_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "question: Ready?", 'question: "{{ item }}" is ready?')
    assert len(found) == 1, found
    assert found[0].startswith("7:28: invalid YAML: "), found
    assert found[0].endswith(
        "; a text that starts with a quote ends where the quote closes: put the whole text "
        "in quotes, or start it without one"
    ), found


def test_other_yaml_errors_give_no_such_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "    choices:", "     choices:")
    assert len(found) == 1, found
    assert "quote" not in found[0], found
