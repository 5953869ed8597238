"""Two shapes an author gets wrong say what to write, on one line naming the file, line
and field (exit code 2): a gate written without `choices`, and the one-reviewer
shorthand `reviewer:` given the list that `reviewers:` takes."""

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
    choices: {ship: {to: done}}
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


def test_a_gate_without_choices_says_how_to_write_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = validate(
        tmp_path, capsys, WORKFLOW.replace("    choices: {ship: {to: done}}\n", "")
    )
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "12: nodes[1].choices: required field is missing (a gate needs at least one "
        "choice: choices: {NAME: {to: NODE}}, NODE the node it leads to)"
    )


def test_reviewer_given_a_list_points_to_reviewers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = validate(
        tmp_path, capsys, WORKFLOW.replace("    reviewers:\n", "    reviewer:\n")
    )
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "8: nodes[0].reviewer: should be a string, not a list: reviewer: takes one role "
        "(an approval reviewer); a list of reviewers is written under reviewers:"
    )
