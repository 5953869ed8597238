"""Three workflows keeping their items in one folder: the refusal names all three, in
words that fit three ("all 3 keep"), not "both"."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: {name}
modes: {{standard: {{max_iterations: 1}}}}
roles: {{writer: {{access: write}}}}
nodes:
  - id: plan
    executor: writer
    outputs: [plan.md]
  - id: done
    kind: end
"""
NAMES = ("first", "second", "third")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with three workflows written without items_dir (all in ``work``)."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".phasegate").mkdir()
    (root / ".phasegate" / "config.yaml").write_text("roles: {default: {backend: auto}}\n")
    folder = root / ".phasegate" / "workflows"
    for name in NAMES:
        (folder / "prompts" / name).mkdir(parents=True)
        (folder / "prompts" / name / "plan.md").write_text("Plan {{ item }}.\n")
        (folder / f"{name}.yaml").write_text(WORKFLOW.format(name=name))
    return root


def test_each_is_refused_naming_all_three(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = repo / ".phasegate" / "workflows"
    for name in NAMES:
        code, _, err = cli(capsys, "validate", str(folder / f"{name}.yaml"))
        assert code == ExitCode.BAD_INPUT
        line = err.splitlines()[0]
        assert "both" not in line, line
        assert "workflows 'first', 'second' and 'third' all 3 keep their work items in 'work'" in (
            line
        )
        assert all(str(folder / f"{other}.yaml") in line for other in NAMES), line
