"""A reviewer's `timeout` and a gate's `timeout.minutes` are a number, or the name of a number in
the item's data. A quoted number (`minutes: "30"`) would be taken as a name no data holds, so the
gate would never time out; `.inf` and `.nan` are no number of seconds either. `phasegate
validate` refuses each as one line naming the file, the line and the field, exit code 2."""

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
    status: completed
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


@pytest.mark.parametrize("value", ["60", "review_timeout"])
def test_a_number_or_a_name_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("timeout: 60", f"timeout: {value}"))
    assert code == 0, said


@pytest.mark.parametrize(
    ("old", "field"),
    [("timeout: 60", "nodes[0].reviewers[0].timeout"), ("minutes: 5", "nodes[1].timeout.minutes")],
)
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"30"', "'30' is a quoted number: write it without quotes"),
        ("'1.5'", "'1.5' is a quoted number: write it without quotes"),
        (".inf", "should be a finite number or a string, not a number (inf)"),
        (".nan", "should be a finite number or a string, not a number (nan)"),
    ],
)
def test_a_quoted_or_endless_number_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    field: str,
    value: str,
    message: str,
) -> None:
    key = old.split(":")[0]
    code, said = validate(tmp_path, capsys, WORKFLOW.replace(old, f"{key}: {value}"))
    assert code == ExitCode.BAD_INPUT, said
    line = next(i for i, text in enumerate(WORKFLOW.splitlines(), 1) if old in text)
    found = [text for text in said.splitlines() if text.startswith(f"{tmp_path / 'wf.yaml'}:")]
    assert len(found) == 1, said
    assert found[0].startswith(f"{tmp_path / 'wf.yaml'}:{line}: {field}: {message}"), found
