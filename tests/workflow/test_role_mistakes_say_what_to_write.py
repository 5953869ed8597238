"""Role mistakes in a workflow say what to write instead: a misspelt role names the role
spelt alike (as a misspelt node does), a reviewer's role that may write says how to make it
read-only, and an agent node without an executor is said once, with the roles there are.
`phasegate validate` refuses each, one line naming the file, line and field, exit code 2; in
the `phases:` shorthand too."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles:
  writer: {access: write}
  checker: {}
nodes:
  - id: write
    executor: writer
    reviewer: checker
  - id: done
    kind: end
"""

PHASES = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles:
  writer: {access: write}
  checker: {}
phases:
  - name: write
    artifact: notes.md
    executor: writer
    reviewer: checker
"""

WRITING = (
    "reviewer role 'checker' must be read-only (least privilege): set "
    "roles.checker.access: read-only, or have a read-only role review"
)


def problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, old: str, new: str
) -> list[str]:
    path = tmp_path / "wf.yaml"
    assert old in text
    path.write_text(text.replace(old, new))
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True)
    for name in ("write", "checker"):
        (prompts / f"{name}.md").write_text("Do it.\n")
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]


@pytest.mark.parametrize("text", [WORKFLOW, PHASES], ids=["nodes", "phases"])
def test_a_misspelt_role_names_the_one_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    found = problems(tmp_path, capsys, text, "executor: writer", "executor: writter")
    assert [p.split(": ", 2)[2] for p in found] == [
        "unknown role 'writter' (roles: writer, checker); did you mean 'writer'?"
    ], found


@pytest.mark.parametrize("text", [WORKFLOW, PHASES], ids=["nodes", "phases"])
def test_a_reviewer_role_that_writes_says_how_to_make_it_read_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    found = problems(tmp_path, capsys, text, "checker: {}", "checker: {access: write}")
    assert [p.split(": ", 2)[2] for p in found] == [WRITING], found


def test_a_node_without_executor_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, WORKFLOW, "    executor: writer\n", "")
    assert found == [
        "7: nodes[0].executor: an agent node needs an 'executor' role (roles: writer, checker)"
    ]
