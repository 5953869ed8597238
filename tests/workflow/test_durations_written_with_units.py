"""A gate's `timeout.minutes` and a reviewer's `timeout` are a number, or the name of a number in
the item's data. A duration written with its unit (`5m`, `30 minutes`, `1h`) is no such name:
it was taken as one no data holds, so the gate never timed out. `phasegate validate` refuses
it, one line naming the file, line and field, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, checker: {access: read-only}}
nodes:
  - id: write
    executor: writer
    outputs: [notes.md]
    reviewers:
      - {role: checker, timeout: 60, on: {APPROVED: pass, REJECTED: revise, UNCLEAR: revise}}
  - id: ask
    kind: gate
    question: Go on?
    timeout: {minutes: 5, choice: go}
    choices: {go: {to: done}}
  - id: done
    kind: end
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    for name in ("write", "checker"):
        (prompts / f"{name}.md").write_text("Do it for {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    return code, out + err


@pytest.mark.parametrize("value", ["5m", "30 minutes", "1h", "'1.5 min'", "''"])
def test_a_duration_with_a_unit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("minutes: 5,", f"minutes: {value},"))
    assert code == ExitCode.BAD_INPUT, said
    shown = value.strip("'")
    assert (
        f"{tmp_path / 'wf.yaml'}:14: nodes[1].timeout.minutes: {shown!r} is neither a number of "
        "minutes nor the name of a number in the item's data: write the number of minutes "
        "alone, without a unit"
    ) in said.splitlines(), said


def test_a_review_timeout_with_a_unit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("timeout: 60", "timeout: 90s"))
    assert code == ExitCode.BAD_INPUT, said
    assert (
        f"{tmp_path / 'wf.yaml'}:10: nodes[0].reviewers[0].timeout: '90s' is neither a number "
        "of seconds nor the name of a number in the item's data: write the number of seconds "
        "alone, without a unit"
    ) in said.splitlines(), said


@pytest.mark.parametrize("value", ["5", "2.5", "wait_minutes", "escalation_timeout_minutes"])
def test_a_number_or_a_name_is_still_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("minutes: 5,", f"minutes: {value},"))
    assert code == 0, said
