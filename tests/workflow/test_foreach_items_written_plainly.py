"""A foreach's `items` is a parser plug-in over a file (`{parser: markdown-tasks, file:
tasks.md}`). Written as the file alone, or without its parser, `phasegate validate` says how
to write it and which parsers are installed; an action node without its `action` lists the
actions. One line naming the file, line and field, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate import plugins
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
  - id: finish
    kind: action
    action: finish
  - id: done
    kind: end
"""


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> list[str]:
    path = tmp_path / "wf.yaml"
    assert old in WORKFLOW
    path.write_text(WORKFLOW.replace(old, new))
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]


def test_items_written_as_the_file_alone_says_how_to_write_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "{parser: markdown-tasks, file: tasks.md}", "tasks.md")
    assert found == [
        "10: nodes[1].items: should be a mapping (key: value), not a string ('tasks.md'): a "
        "parser plug-in over a file ({parser: markdown-tasks, file: tasks.md})"
    ]


def test_items_without_a_parser_lists_the_parsers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(
        tmp_path, capsys, "{parser: markdown-tasks, file: tasks.md}", "{file: tasks.md}"
    )
    installed = ", ".join(plugins.names("parsers"))
    assert "markdown-tasks" in installed
    assert found == [
        f"10: nodes[1].items.parser: required field is missing (a parser plug-in; installed: "
        f"{installed})"
    ]


def test_an_action_node_without_its_action_lists_the_actions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "    action: finish\n", "")
    installed = ", ".join(plugins.names("actions"))
    assert "finish" in installed
    assert found == [
        "16: nodes[2].action: required field is missing (an action plug-in; installed: "
        f"{installed})"
    ]
