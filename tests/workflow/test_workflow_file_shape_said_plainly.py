"""A workflow file that is not a workflow at all (empty, only comments, a list, a tab where YAML
takes spaces) is refused with one problem line saying what the file holds and what to do, exit
code 2; `validate --json` lists it among `problems`, as any other problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> str:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    lines = [line for line in err.splitlines() if line.startswith(f"{path}")]
    assert len(lines) == 1, err
    assert err.splitlines()[-1] == f"phasegate: error: {path} is not a valid workflow (1 problem)"
    return lines[0]


@pytest.mark.parametrize("text", ["", "\n\n", "# my workflow, to write\n"])
def test_an_empty_file_is_said_to_be_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    said = refused(tmp_path, capsys, text)
    assert said == (
        f"{tmp_path / 'wf.yaml'}: the workflow file is empty "
        "(a workflow is a mapping: name, modes, roles, nodes...; see docs/workflows.md)"
    )


@pytest.mark.parametrize(("text", "kind"), [("- id: a\n", "a list"), ("hello\n", "a string")])
def test_a_file_of_something_else_says_what_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, kind: str
) -> None:
    said = refused(tmp_path, capsys, text)
    assert said == (
        f"{tmp_path / 'wf.yaml'}:1: a workflow file must hold a mapping "
        f"at the top level (name: ..., nodes: ...), not {kind}"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("name: wf\nmodes:\n\tstandard: {max_iterations: 2}\n", "3:1"),
        ("name:\twf\n", "1:6"),
    ],
)
def test_a_tab_says_to_use_spaces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: str
) -> None:
    said = refused(tmp_path, capsys, text)
    assert said.startswith(f"{tmp_path / 'wf.yaml'}:{line}: invalid YAML: "), said
    assert said.endswith("a tab, where YAML takes spaces: indent and separate with spaces"), said


@pytest.mark.parametrize("text", ["", "- id: a\n", "name: [\n"])
def test_validate_json_lists_the_problem_of_a_file_that_is_no_workflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "validate", "--json", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    report = json.loads(out)
    assert report["valid"] is False
    assert len(report["problems"]) == 1 and report["problems"][0].startswith(f"{path}:"), report
