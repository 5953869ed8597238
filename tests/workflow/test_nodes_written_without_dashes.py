"""`nodes:` (a foreach's `body:`, the shorthand's `phases:`) written as one mapping, the
entries' dashes left out, said only `should be a list, not a mapping`; it now says how a list
entry is written. `phasegate validate` refuses it, one line naming the file, line and field,
exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

HEAD = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
"""


@pytest.mark.parametrize(
    ("tail", "field", "first"),
    [
        ("nodes:\n  id: done\n  kind: end\n", "nodes", "id"),
        ("phases:\n  name: finish\n  kind: finish\n", "phases", "name"),
        (
            "nodes:\n  - id: each\n    kind: foreach\n    items: {parser: markdown-tasks, "
            "file: x.md}\n    body:\n      id: fin\n      kind: end\n  - id: done\n    kind: end\n",
            "nodes[0].body",
            "id",
        ),
    ],
    ids=["nodes", "phases", "body"],
)
def test_entries_without_dashes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tail: str, field: str, first: str
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(HEAD + tail)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    found = [line for line in err.splitlines() if line.startswith(f"{path}:")]
    assert len(found) == 1, err
    assert found[0].split(": ", 1)[1] == (
        f"{field}: should be a list, not a mapping: each entry starts with '- ' "
        f"('- {first}: ...', its fields under it)"
    ), found
