"""`phasegate validate` reports every problem as `file:line: field: message`, in line order:
a field a mapping lacks is reported at the line of that mapping."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode


def validate(capsys: pytest.CaptureFixture[str], path: Path) -> list[str]:
    code, _, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, err
    return [line for line in err.splitlines() if line.startswith(f"{path}")]


def test_a_missing_top_level_field_names_the_line_of_the_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text("# my workflow\n\nphases:\n  - id: a\n")
    problems = validate(capsys, path)
    assert f"{path}:3: name: required field is missing" in problems
    assert f"{path}:4: phases[0].name: required field is missing" in problems
    assert all(re.match(rf"{re.escape(str(path))}:\d+: ", p) for p in problems), problems


def test_problems_are_listed_in_line_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(
        "items_dir: fitems\n"
        "modes: {standard: {max_iterations: 2}}\n"
        "roles: {w: {access: write}}\n"
        "nodes:\n"
        "  - id: mk\n"
        "    executor: nobody\n"
        "  - id: fin\n"
        "    kind: end\n"
        "name: other\n"
    )
    problems = validate(capsys, path)
    lines = [int(p.removeprefix(f"{path}:").split(":", 1)[0]) for p in problems]
    assert len(lines) >= 2, problems
    assert lines == sorted(lines), problems
    assert problems[-1] == (
        f"{path}:9: name: name 'other' must match the file name 'f' "
        "(rename the file to other.yaml, or write name: f)"
    )
