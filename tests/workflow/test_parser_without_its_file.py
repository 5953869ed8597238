"""A parser that reads a file (`markdown-tasks`), written without its `file`
(`items: {parser: markdown-tasks}`), is refused when the workflow loads, naming the
file, line and field and what to write (exit code 2), not accepted until the run
reaches the foreach and stops there."""

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
      - id: fin
        kind: end
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


def test_foreach_items_without_the_file_its_parser_reads_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("{parser: markdown-tasks, file: tasks.md}", "{parser: markdown-tasks}")
    code, found = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "10: nodes[1].items: the markdown-tasks parser reads a file: name it "
        "({parser: markdown-tasks, file: FILE}, FILE an output of an earlier node)"
    )


def test_the_same_workflow_with_its_file_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = validate(tmp_path, capsys, WORKFLOW)
    assert code == 0, found
