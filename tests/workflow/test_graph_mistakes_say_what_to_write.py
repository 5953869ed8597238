"""A node nothing leads to, and a loop with no way out, are refused by `phasegate validate`
with what to write instead: one line each naming the file, line and field, exit code 2."""

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
  - id: test
    kind: check
    run: [{name: t, run: "true"}]
    on: {pass: done, fail: test}
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


def test_a_node_nothing_leads_to(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = problems(
        tmp_path, capsys, "  - id: done\n", "  - id: lost\n    kind: end\n  - id: done\n"
    )
    assert found == [
        "9: nodes[1].id: node 'lost' is unreachable from the start node 'test' (lead an "
        "outcome or a gate choice to it, or remove it)"
    ]


def test_a_loop_with_no_way_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = problems(tmp_path, capsys, "{pass: done, fail: test}", "{pass: test, fail: test}")
    assert found[0] == (
        "8: nodes[0].on: node 'test' has no way to finish (no end node is reachable): map one "
        "of its outcomes to an end node, or to a node that leads to one"
    ), found
