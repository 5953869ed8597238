"""A plug-in name misspelt (`reader: aproval`) names the installed one meant, and a
gate's `choices` written as a list of nodes says the mapping to write: one line naming
the file, line and field (exit code 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, critic: {}}
nodes:
  - id: plan
    executor: writer
    outputs: [plan.md]
    reviewers:
      - role: critic
        reader: approval
        on: {APPROVED: pass, REJECTED: revise, UNCLEAR: revise}
  - id: ask
    kind: gate
    question: "Ship {{ item }}?"
    choices: {ship: {to: done}, again: {to: plan}}
  - id: done
    kind: end
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    for name in ("plan.md", "critic.md"):
        (prompts / name).write_text("Work on {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    lines = [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]
    return code, "\n".join(lines) or out + err


def test_the_workflow_as_written_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = validate(tmp_path, capsys, WORKFLOW)
    assert code == 0, found


def test_a_misspelt_reader_names_the_one_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = validate(
        tmp_path, capsys, WORKFLOW.replace("reader: approval", "reader: aproval")
    )
    assert code == ExitCode.BAD_INPUT, found
    assert found.startswith("10: nodes[0].reviewers[0].reader: unknown reader plug-in 'aproval' (")
    assert found.endswith("); did you mean 'approval'?")


def test_choices_written_as_a_list_say_the_mapping_to_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("{ship: {to: done}, again: {to: plan}}", "[done, plan]")
    code, found = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "15: nodes[1].choices: should be a mapping (key: value), not a list: each choice "
        "is a name and the node it leads to ({NAME: {to: NODE}})"
    )
