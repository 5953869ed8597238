"""A comma inside a value of a ``{...}`` mapping ends that value (``{description: Ship it,
now}`` holds a field ``now``); the unknown field it makes says a comma split the value and
how to quote it, rather than only that ``now`` is not a field."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes:
  quick: {{max_iterations: 1, description: {description}}}
roles: {{writer: {{access: write}}}}
nodes:
  - id: write
    executor: writer
    prompt: Write it.
"""


def _validate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, description: str
) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.format(description=description), encoding="utf-8")
    code, out, err = cli(capsys, "validate", str(path))
    return code, err + out


def test_comma_in_a_plain_flow_value_says_to_quote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = _validate(capsys, tmp_path, "Ship it, now")
    assert code == ExitCode.BAD_INPUT
    assert (
        "wf.yaml:4: modes.quick.now: unknown field; a comma split the value of 'description' "
        "('Ship it, now'): put the whole value in quotes (description: \"Ship it, now\")"
    ) in output


def test_every_piece_a_comma_split_off_says_the_whole_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = _validate(capsys, tmp_path, "Ship it, now, today")
    assert code == ExitCode.BAD_INPUT
    for piece in ("now", "today"):
        assert (
            f"modes.quick.{piece}: unknown field; a comma split the value of 'description' "
            "('Ship it, now, today')"
        ) in output


def test_a_field_after_a_quoted_value_is_only_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quoted value ends at its quote: the comma after it did not split it."""
    code, output = _validate(capsys, tmp_path, '"Ship it", now')
    assert code == ExitCode.BAD_INPUT
    assert "modes.quick.now: unknown field" in output
    assert "comma" not in output


def test_a_misspelt_field_with_a_value_keeps_its_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = _validate(capsys, tmp_path, "Ship it, max_iteration: 2")
    assert code == ExitCode.BAD_INPUT
    assert "modes.quick.max_iteration: unknown field; did you mean 'max_iterations'?" in output
    assert "comma" not in output
