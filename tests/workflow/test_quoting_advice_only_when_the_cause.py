"""The advice on quoting (a text starting with a quote ends where the quote closes; one
starting with '{{' is read as a mapping) is given only when that text is what YAML stopped
at: a '-' written inside a `[` list next to a quoted word, or a placeholder later on the
line, gets the plain YAML problem. `phasegate validate` says it, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    question: Ready?
    choices:
      yes: {to: done, description: Ship it}
      no: done
  - id: done
    kind: end
"""


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> list[str]:
    path = tmp_path / "wf.yaml"
    assert old in WORKFLOW
    path.write_text(WORKFLOW.replace(old, new))
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return [
        line.removeprefix(f"{path}:") for line in err.splitlines() if line.startswith(f"{path}:")
    ]


@pytest.mark.parametrize(
    "new",
    [
        'yes: [done, - b]  # say: "yes" or no',
        "yes: [done, - 'no' x]",
        'yes: ["done", - no]',
        "yes: [done, - b, {{ item }}]",
    ],
)
def test_an_unrelated_yaml_error_gets_no_quoting_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], new: str
) -> None:
    found = problems(tmp_path, capsys, "yes: {to: done, description: Ship it}", new)
    assert len(found) == 1, found
    assert "found '-'" in found[0], found
    assert "quote" not in found[0], found


@pytest.mark.parametrize(
    ("new", "advice"),
    [
        ('question: ["a" b]', "ends where the quote closes"),
        ("question: {{ item is ready", "is read as a YAML mapping"),
        ("question: {{ item }}, ready?", "is read as a YAML mapping"),
    ],
)
def test_the_text_yaml_stopped_at_gets_the_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], new: str, advice: str
) -> None:
    found = problems(tmp_path, capsys, "question: Ready?", new)
    assert len(found) == 1, found
    assert advice in found[0], found
