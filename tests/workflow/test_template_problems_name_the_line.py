"""A problem in a prompt template (a placeholder nothing fills, one not closed, one filled only
inside a foreach body) names the template's line and column, besides the workflow's file, line
and field: `phasegate validate` and `phasegate new` say it, exit code 2."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: write
    executor: writer
    outputs: [notes.md]
  - id: done
    kind: end
    status: completed
"""


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], template: str) -> list[str]:
    """``phasegate validate`` of WORKFLOW whose node's template is ``template``: its lines."""
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "write.md").write_text(template)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [line for line in err.splitlines() if line.startswith(f"{path}:")]


def test_an_unknown_placeholder_names_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "Write notes.\n\nFor {{ itme }} and\n  {{other}} too\n")
    path, template = tmp_path / "wf.yaml", tmp_path / "prompts" / "wf" / "write.md"
    assert len(found) == 2, found
    assert found[0].startswith(
        f"{path}:6: nodes[0].prompt: template {template}:3:5: unknown placeholder 'itme' "
        "(known: artifact, "
    ), found
    assert "did you mean 'item'?" in found[0]
    assert found[1].startswith(
        f"{path}:6: nodes[0].prompt: template {template}:4:3: unknown placeholder 'other' "
    ), found


def test_a_placeholder_not_closed_names_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "Write notes\nfor   {{ item and go.\n")
    template = tmp_path / "prompts" / "wf" / "write.md"
    assert found == [
        f"{tmp_path / 'wf.yaml'}:6: nodes[0].prompt: template {template}:2:7: "
        "'{{ item and go.' is not closed with '}}'"
    ]


def test_a_foreach_name_outside_a_foreach_names_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "Write notes for {{ item }}\nabout {{ task_title }}.\n")
    template = tmp_path / "prompts" / "wf" / "write.md"
    assert found == [
        f"{tmp_path / 'wf.yaml'}:6: nodes[0].prompt: template {template}:2:7: 'task_title' "
        "is filled only inside a foreach body (this node is not in one: it would be empty)"
    ]


def test_new_on_a_user_workflow_names_the_template_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "wf").mkdir(parents=True)
    (folder / "wf.yaml").write_text(WORKFLOW)
    template = folder / "prompts" / "wf" / "write.md"
    template.write_text("# Notes\n\nWrite them for {{ iten }}.\n")
    code, out, err = cli(capsys, "new", "one", "--workflow", "wf", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT, out + err
    assert f"template {template}:3:16: unknown placeholder 'iten'" in err, err
