"""An outcome a node can end with that `on` does not map (and no default routes) is refused by
`phasegate validate` with what to write: `on: {OUTCOME: NODE}`, one line naming the file, line
and field, exit code 2."""

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
  - id: write
    executor: writer
    outputs: [{file: notes.md, parser: markdown-tasks}]
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: notes.md}
    body:
      - id: failed
        kind: end
        outcome: failed
    on: {failed: done}
  - id: done
    kind: end
"""


def test_an_unmapped_outcome_says_how_to_map_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    (tmp_path / "prompts" / "wf").mkdir(parents=True)
    (tmp_path / "prompts" / "wf" / "write.md").write_text("Write.\n")
    path.write_text(WORKFLOW.replace("    on: {failed: done}\n", ""))
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert [line for line in err.splitlines() if line.startswith(f"{path}:")] == [
        f"{path}:8: nodes[1].on: outcome 'failed' of node 'each' is not mapped (map it in on: "
        "{failed: NODE}, NODE the node it leads to)"
    ]
    path.write_text(WORKFLOW)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0, out + err
