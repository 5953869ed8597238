"""A workflow added with the items folder of another (the default ``work`` for both) is
refused naming both workflow files and the key that parts them. When the folder already
holds items of one of them, that one goes on working (its items are run and listed as
before) and only the newcomer is refused; with no items there yet, both are refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode
from phasegate.workflow.example_files import copy_example

SECOND = """\
name: second
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - id: plan
    executor: writer
    outputs: [plan.md]
  - id: done
    kind: end
"""


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A repository with the review-loop example (items in ``work``, written in its file)."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    (root / ".phasegate").mkdir()
    (root / ".phasegate" / "config.yaml").write_text("roles: {default: {backend: auto}}\n")
    copy_example("review-loop", root)
    return root


def add_second(root: Path) -> Path:
    """Workflow ``second``, written without items_dir: its items go to ``work`` too."""
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "second").mkdir(parents=True)
    (folder / "prompts" / "second" / "plan.md").write_text("Plan {{ item }}.\n")
    path = folder / "second.yaml"
    path.write_text(SECOND)
    return path


def review_loop(root: Path) -> Path:
    return root / ".phasegate" / "workflows" / "review-loop.yaml"


def items_dir_line(path: Path) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith("items_dir:"))


def test_the_workflow_with_items_keeps_working_and_the_newcomer_is_told_what_to_set(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "new", "shop", "-w", "review-loop", "-d", "x", "-C", str(repo))
    assert code == 0, err
    second = add_second(repo)
    first = review_loop(repo)

    code, out, err = cli(capsys, "validate", str(first))
    assert code == 0, err
    assert "ok: workflow 'review-loop'" in out
    code, out, err = cli(capsys, "status", "shop", "-C", str(repo))
    assert code == 0, err
    assert "shop" in out

    code, _, err = cli(capsys, "validate", str(second))
    assert code == ExitCode.BAD_INPUT
    line = err.splitlines()[0]
    assert line.startswith(f"{second}: items_dir: workflows 'review-loop' and 'second' both ")
    assert f"{first}:{items_dir_line(first)}" in line  # where the other sets the folder
    assert "'work' holds items of 'review-loop'" in line
    assert f"set items_dir in {second} (or workflows.second.items_dir in " in line

    code, out, _ = cli(capsys, "workflows", "-C", str(repo))
    assert code == 0
    shown = {row.split(" ")[0]: row for row in out.splitlines() if not row.startswith(" ")}
    assert "invalid" not in shown["review-loop"]
    assert "second (repo, invalid)" in shown["second"]

    code, _, err = cli(capsys, "new", "other", "-w", "second", "-d", "x", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT
    assert not (repo / "work" / "other").exists()


def test_without_items_yet_both_are_refused_each_naming_both_files(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = add_second(repo)
    first = review_loop(repo)
    for path, other in ((first, second), (second, first)):
        code, _, err = cli(capsys, "validate", str(path))
        assert code == ExitCode.BAD_INPUT
        line = err.splitlines()[0]
        assert "both keep their work items in 'work'" in line
        assert str(other) in line, line
        assert "items_dir" in line.split("; ", 1)[1]
