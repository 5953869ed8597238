"""A number field of a workflow given `true` or `false` is refused: YAML's booleans are not
1 and 0 (`max_iterations: true` would otherwise mean one review round). `phasegate validate`
says it as one line naming the file, the line and the field, with exit code 2."""

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
    label: writing
    executor: writer
    max_visits: 3
    outputs: [{file: notes.md, min_items: 1}]
    reviewers:
      - {role: checker, timeout: 60, on: {APPROVED: pass, REJECTED: revise, UNCLEAR: revise}}
  - id: ask
    kind: gate
    label: asking
    question: Go on?
    attempts: 3
    timeout: {minutes: 5, choice: go}
    choices:
      again: {to: write, extend: 1}
      go: {to: tasks}
  - id: tasks
    kind: foreach
    items: {parser: markdown-tasks, file: notes.md}
    parallel: 1
    conflicts: {attempts: 2}
    body:
      - id: work
        executor: writer
        on: {pass: finished}
      - id: finished
        kind: end
  - id: done
    kind: end
    status: completed
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    for name in ("write", "work", "checker"):
        (prompts / f"{name}.md").write_text("Do it for {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    return code, out + err


def test_the_workflow_as_written_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW)
    assert code == 0, said


@pytest.mark.parametrize(
    ("old", "field", "expected"),
    [
        ("max_iterations: 2", "modes.standard.max_iterations", "a whole number"),
        ("max_visits: 3", "nodes[0].max_visits", "a whole number"),
        ("min_items: 1", "nodes[0].outputs[0].min_items", "a whole number"),
        ("timeout: 60", "nodes[0].reviewers[0].timeout", "a number or a string"),
        ("attempts: 3", "nodes[1].attempts", "a whole number"),
        ("minutes: 5", "nodes[1].timeout.minutes", "a number or a string"),
        ("extend: 1", "nodes[1].choices.again.extend", "a whole number or 'mode'"),
        ("parallel: 1", "nodes[2].parallel", "a whole number"),
        ("attempts: 2", "nodes[2].conflicts.attempts", "a whole number"),
    ],
)
@pytest.mark.parametrize("boolean", ["true", "false"])
def test_a_boolean_in_a_number_field_is_refused_naming_file_line_and_field(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    field: str,
    expected: str,
    boolean: str,
) -> None:
    assert WORKFLOW.count(old) == 1
    key = old.split(":")[0]
    code, said = validate(tmp_path, capsys, WORKFLOW.replace(old, f"{key}: {boolean}"))
    assert code == ExitCode.BAD_INPUT, said
    line = next(i for i, text in enumerate(WORKFLOW.splitlines(), 1) if old in text)
    path = tmp_path / "wf.yaml"
    assert f"{path}:{line}: {field}: should be {expected}, not true/false" in said.splitlines()


def test_a_boolean_max_iterations_of_a_phases_workflow_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "name: wf\n"
        "items_dir: wfitems\n"
        "modes:\n"
        "  standard:\n"
        "    max_iterations: true\n"
        "roles: {writer: {access: write}}\n"
        "phases:\n"
        "  - {name: write, executor: writer, artifact: notes.md}\n"
    )
    code, said = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, said
    path = tmp_path / "wf.yaml"
    assert (
        f"{path}:5: modes.standard.max_iterations: should be a whole number, not true/false"
        in said.splitlines()
    )


@pytest.mark.parametrize(("value", "said"), [(".inf", "inf"), (".nan", "nan")])
def test_inf_and_nan_are_not_whole_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    """Said in the YAML's words, not pydantic's ("Input should be a finite number")."""
    text = WORKFLOW.replace("max_visits: 3", f"max_visits: {value}")
    code, out = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, out
    line = next(i for i, t in enumerate(WORKFLOW.splitlines(), 1) if "max_visits: 3" in t)
    assert (
        f"{tmp_path / 'wf.yaml'}:{line}: nodes[0].max_visits: should be a whole number, "
        f"not a number ({said})"
    ) in out.splitlines()
