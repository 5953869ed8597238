"""A misspelt placeholder in a workflow's own text (a gate's question, a choice's description)
is refused naming the placeholder it resembles, as one in a prompt template is."""

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
    question: QUESTION
    choices: {go: {to: done}}
  - id: done
    kind: end
"""
KNOWN = "description, item, item_dir, label, mode, phase, workflow"


@pytest.mark.parametrize(
    ("question", "message"),
    [
        (
            "'Ship {{ itme }}?'",
            f"unknown placeholder 'itme' (known here: {KNOWN}); did you mean 'item'?",
        ),
        (
            "'Ship {{ itme }} in {{ mdoe }}?'",
            f"unknown placeholders 'itme', 'mdoe' (known here: {KNOWN}); "
            "did you mean 'item' for 'itme', 'mode' for 'mdoe'?",
        ),
        ("'Ship {{ zzz }}?'", f"unknown placeholder 'zzz' (known here: {KNOWN})"),
    ],
)
def test_a_misspelt_placeholder_of_a_question_names_the_one_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], question: str, message: str
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.replace("QUESTION", question))
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    # The line and column of the (first) placeholder: after the opening quote.
    assert f"{path}:8:21: nodes[0].question: {message}" in err.splitlines(), err
