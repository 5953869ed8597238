"""A label described under `labels:` that no node has says what to write, and names the
node label spelt alike when one is (a typo on either side): one line naming the file,
line and label (exit code 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
labels:
  building: {description: The work is being built.}
nodes:
  - id: plan
    label: building
    executor: writer
  - id: done
    kind: end
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "plan.md").write_text("Work on {{ item }}.\n")
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


def test_a_node_label_misspelt_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = validate(tmp_path, capsys, WORKFLOW.replace("label: building", "label: bilding"))
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "5: labels.building: no node has the label 'building'; node 'plan' has the label "
        "'bilding': write the same name in both places"
    )


def test_a_label_no_node_comes_near_says_what_to_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("    label: building\n", "")
    code, found = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "5: labels.building: no node has the label 'building' (give a node label: building, "
        "or remove it from labels)"
    )
