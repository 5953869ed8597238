"""A placeholder written with single braces (`reports/{task}.md`, `Ship {item}?`) is
never filled: every task would write the one file `reports/{task}.md`. The workflow is
refused when it loads, naming the file, line, column and field and the double-brace
form to write (exit code 2)."""

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
  - id: plan
    executor: writer
    outputs: [tasks.md]
  - id: loop
    kind: foreach
    items: {parser: markdown-tasks, file: tasks.md}
    body:
      - id: do
        executor: writer
        outputs: ["reports/{{ task }}.md"]
      - id: fin
        kind: end
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
    for name in ("plan.md", "do.md"):
        (prompts / name).write_text("Work on {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    lines = [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]
    return code, "\n".join(lines) or out + err


def test_an_output_path_with_single_braces_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("reports/{{ task }}.md", "reports/{task}.md")
    code, found = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "14: nodes[1].body[0].outputs[0]: '{task}' is never filled: a placeholder takes "
        "double braces ({{ task }})"
    )


def test_a_question_with_single_braces_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("Ship {{ item }}?", "Ship {item}?")
    code, found = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "19:21: nodes[2].question: '{item}' is never filled: a placeholder takes "
        "double braces ({{ item }})"
    )


def test_braces_around_other_words_and_double_braces_are_fine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("Ship {{ item }}?", "Ship {{ item }} as {json}?")
    code, found = validate(tmp_path, capsys, text)
    assert code == 0, found
