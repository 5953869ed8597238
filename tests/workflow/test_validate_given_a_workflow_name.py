"""`phasegate validate` takes a workflow's file. Given a workflow's name instead
(`phasegate validate review-loop`), it said only `review-loop: no such file`; it now names
the file to give it, exit code 2. A name that is no workflow is said as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode


@pytest.fixture
def repo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    code, _, err = cli(capsys, "init", "--example", "review-loop", "-C", str(root))
    assert code == 0, err
    monkeypatch.chdir(root)
    return root


def test_a_repository_workflows_name_names_its_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "validate", "review-loop")
    assert code == ExitCode.BAD_INPUT, out + err
    assert err.strip() == (
        "phasegate: error: review-loop: no such file; validate takes a workflow's file: "
        "phasegate validate .phasegate/workflows/review-loop.yaml"
    )
    code, out, err = cli(capsys, "validate", ".phasegate/workflows/review-loop.yaml")
    assert code == 0, out + err


def test_a_built_in_workflows_name_names_its_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "validate", "feature")
    assert code == ExitCode.BAD_INPUT, out + err
    assert err.startswith("phasegate: error: feature: no such file; validate takes a ")
    assert err.strip().endswith("/workflow/builtin/feature.yaml"), err


def test_a_name_that_is_no_workflow(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "validate", "nothing")
    assert code == ExitCode.BAD_INPUT, out + err
    assert err.strip() == "phasegate: error: nothing: no such file"
