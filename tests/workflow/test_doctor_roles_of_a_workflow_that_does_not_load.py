"""A config role that belongs only to a repository workflow that does not load is not
taken for a misspelt role by ``doctor``: that workflow's roles are read from its file.
When a workflow's file cannot be read at all, doctor cannot tell which roles it has,
and warns of no misspelt role. A misspelt role is still named beside a broken
workflow whose roles can be read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli

#: Loads as YAML, but is no valid workflow (its node names an executor it lacks).
BROKEN = """\
name: mine
modes: {standard: {max_iterations: 1}}
roles: {reviewers: {access: read}}
nodes:
  - id: plan
    executor: nobody
    outputs: [plan.md]
  - id: done
    kind: end
"""


def doctor_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], roles: str, workflow: str
) -> list[str]:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".phasegate" / "workflows").mkdir(parents=True)
    (root / ".phasegate" / "workflows" / "mine.yaml").write_text(workflow)
    (root / ".phasegate" / "config.yaml").write_text(
        f"roles:\n  default: {{backend: auto}}\n{roles}"
    )
    code, _, err = cli(capsys, "doctor", "-C", str(root))
    assert code == 0, err
    return [
        line.removeprefix("phasegate: warning: ")
        for line in err.splitlines()
        if line.startswith("phasegate: warning: ")
    ]


def test_a_role_of_a_workflow_that_does_not_load_is_not_called_misspelt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert doctor_warnings(tmp_path, capsys, "  reviewers: {backend: auto}\n", BROKEN) == []


def test_no_role_is_called_misspelt_while_a_workflow_file_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unreadable = BROKEN.replace("nodes:", "nodes: [")  # not YAML
    assert doctor_warnings(tmp_path, capsys, "  reviewers: {backend: auto}\n", unreadable) == []


def test_a_misspelt_role_is_still_named_beside_a_broken_workflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = doctor_warnings(tmp_path, capsys, "  reviwer: {backend: auto}\n", BROKEN)
    assert len(found) == 1, found
    assert "roles.reviwer: no workflow has a role 'reviwer'" in found[0]
    assert found[0].endswith("did you mean 'reviewer'?"), found[0]
