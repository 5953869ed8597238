"""A mode that skips every node producing a foreach's items file would stop each of its
runs at the foreach (the file is never written). It is refused when the workflow loads,
as a mode skipping the producer of a hard prerequisite is: one line naming the file,
line and mode (exit code 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes:
  standard: {max_iterations: 2}
  quick: {max_iterations: 1, skip: [review]}
roles: {writer: {access: write}}
nodes:
  - id: intro
    executor: writer
  - id: plan
    executor: writer
    outputs: [tasks.md]
  - id: review
    executor: writer
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
    for name in ("intro.md", "plan.md", "review.md", "do.md"):
        (prompts / name).write_text("Work on {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    lines = [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]
    return code, "\n".join(lines) or out + err


def test_a_mode_skipping_another_node_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = validate(tmp_path, capsys, WORKFLOW)
    assert code == 0, found


def test_a_mode_skipping_the_items_files_producer_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = validate(tmp_path, capsys, WORKFLOW.replace("skip: [review]", "skip: [plan]"))
    assert code == ExitCode.BAD_INPUT, found
    assert found == (
        "4: modes.quick.skip[0]: mode 'quick' skips plan, which produces 'tasks.md', the "
        "items file of 'loop'"
    )
