"""A gate choice's `extend` continues the revise loop of the node it leads to, and
`start_with: review` enters that node at its reviewers: only an agent node has either. Leading
to a check, a gate or an end node they did nothing, without a word; `phasegate validate` now
refuses them, one line naming the file, line and field, exit code 2."""

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
  - id: write
    executor: writer
    outputs: [notes.md]
  - id: t
    kind: check
    run: [{name: t, run: "true"}]
    on: {fail: ask}
  - id: ask
    kind: gate
    question: Ready?
    choices:
      yes: {to: done}
      again: {to: write, start_with: review, extend: mode}
  - id: done
    kind: end
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "write.md").write_text("Write notes for {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    return code, out + err


def test_extend_and_start_with_into_an_agent_are_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW)
    assert code == 0, said


def test_extend_and_start_with_into_a_check_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("{to: write,", "{to: t,"))
    assert code == ExitCode.BAD_INPUT, said
    path = tmp_path / "wf.yaml"
    assert [line for line in said.splitlines() if line.startswith(f"{path}:")] == [
        f"{path}:17: nodes[2].choices.again.extend: extend continues the revise loop of the "
        "node it leads to, which only an agent node has: 't' is a check node (it would do "
        "nothing)",
        f"{path}:17: nodes[2].choices.again.start_with: start_with enters the node it leads to "
        "at its reviewers, which only an agent node has: 't' is a check node (it would do "
        "nothing)",
    ]


def test_extend_into_an_end_node_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("{to: done}", "{to: done, extend: 2}"))
    assert code == ExitCode.BAD_INPUT, said
    assert (
        "nodes[2].choices.yes.extend: extend continues the revise loop of the node it leads "
        in said
    )
    assert "'done' is an end node (it would do nothing)" in said
