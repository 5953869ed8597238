"""A misspelt field of a workflow is refused as an unknown field, and the line says which field
of that very place it resembles (a role's `acess` is `access`, a gate's `questoin` is
`question`), so a new user need not look the spelling up."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2, skip: []}}
roles: {writer: {access: write}, checker: {access: read-only}}
nodes:
  - id: write
    executor: writer
    outputs: [{file: notes.md, min_items: 1}]
    reviewers:
      - {role: checker, timeout: 60, on: {APPROVED: pass, REJECTED: revise, UNCLEAR: revise}}
  - id: ask
    kind: gate
    question: Go on?
    choices: {go: {to: test, extend: 1}}
  - id: test
    kind: check
    run: [{name: unit, run: "true", cwd: src}]
  - id: done
    kind: end
    status: completed
"""


@pytest.mark.parametrize(
    ("right", "wrong", "field"),
    [
        ("skip: []", "sikp: []", "modes.standard.sikp"),
        ("access: write", "acess: write", "roles.writer.acess"),
        ("executor: writer", "exector: writer", "nodes[0].exector"),
        ("min_items: 1", "min_item: 1", "nodes[0].outputs[0].min_item"),
        ("timeout: 60", "timout: 60", "nodes[0].reviewers[0].timout"),
        ("extend: 1", "extnd: 1", "nodes[1].choices.go.extnd"),
        ("cwd: src", "cdw: src", "nodes[2].run[0].cdw"),
        ("status: completed", "staus: completed", "nodes[3].staus"),
    ],
)
def test_a_misspelt_field_names_the_field_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], right: str, wrong: str, field: str
) -> None:
    path = tmp_path / "wf.yaml"
    assert WORKFLOW.count(right) == 1
    path.write_text(WORKFLOW.replace(right, wrong))
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True)
    for name in ("write", "checker"):
        (prompts / f"{name}.md").write_text("Do it for {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    line = next(i for i, text in enumerate(WORKFLOW.splitlines(), 1) if right in text)
    meant = right.split(":")[0]
    assert f"{path}:{line}: {field}: unknown field; did you mean {meant!r}?" in err.splitlines(), (
        err
    )


def test_a_field_like_none_of_the_places_fields_is_just_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(
        WORKFLOW.replace("    question: Go on?\n", "    question: Go on?\n    zzz: 1\n")
    )
    code, _, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT
    assert f"{path}:14: nodes[1].zzz: unknown field" in err.splitlines(), err


def test_a_misspelt_top_level_field_names_the_field_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.replace("nodes:\n", "node:\n"))
    code, _, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT
    assert f"{path}:5: node: unknown field; did you mean 'nodes'?" in err.splitlines(), err
