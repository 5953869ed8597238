"""A field written on a node of a kind that does not take it (`prompt` on a check node,
`choices` on an agent node) names the kinds it belongs to, on one line naming the file,
line and field (exit code 2), rather than a bare "unknown field"."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
commands: {}
nodes:
  - id: plan
    executor: writer
    outputs: [plan.md]
  - id: test
    kind: check
    run: [{name: test, run: "true"}]
    on: {fail: plan}
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


def test_a_prompt_on_a_check_node_names_the_kind_that_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("    kind: check\n", "    kind: check\n    prompt: plan.md\n")
    code, found = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, found
    assert found == "11: nodes[1].prompt: unknown field of a check node (a field of agent nodes)"


def test_choices_on_an_agent_node_name_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("    outputs: [plan.md]\n", "    outputs: [plan.md]\n    choices: {}\n")
    code, found = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, found
    assert found == "9: nodes[0].choices: unknown field of an agent node (a field of gate nodes)"
