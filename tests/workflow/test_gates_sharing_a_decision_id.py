"""Two gates asking under one decision id would share one answer: the second gate was never
asked and took the first one's answer, a choice of another question. `phasegate validate`
refuses it, and a decision id phasegate asks its own decisions under (`transition-warning`,
`partial-phase`, `budget`, `conflict-*`), one line naming the file, line and field, exit 2."""

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
    decision: go-on
    question: Ready?
    choices: {yes: sure, no: done}
  - id: sure
    kind: gate
    decision: really
    question: Really ready?
    choices: {yes: done, no: ask}
  - id: done
    kind: end
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    return code, out + err


def problems(said: str, path: Path) -> list[str]:
    return [
        line.removeprefix(f"{path}:") for line in said.splitlines() if line.startswith(f"{path}:")
    ]


def test_two_gates_with_one_decision_id_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW.replace("decision: really", "decision: go-on"))
    assert code == ExitCode.BAD_INPUT, said
    assert problems(said, tmp_path / "wf.yaml") == [
        "12: nodes[1].decision: gate 'sure' asks under the decision id 'go-on', as gate 'ask' "
        "does: one answer would answer both (the second gate would never be asked); give each "
        "gate its own decision id"
    ]


def test_a_decision_id_that_is_another_gates_id_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = WORKFLOW.replace("    decision: go-on\n", "").replace(
        "decision: really", "decision: ask"
    )
    code, said = validate(tmp_path, capsys, text)
    assert code == ExitCode.BAD_INPUT, said
    assert problems(said, tmp_path / "wf.yaml") == [
        "11: nodes[1].decision: gate 'sure' asks under the decision id 'ask', as gate 'ask' "
        "does: one answer would answer both (the second gate would never be asked); give each "
        "gate its own decision id"
    ]


@pytest.mark.parametrize(
    "decision", ["transition-warning", "partial-phase", "budget", "conflict-x"]
)
def test_a_decision_id_phasegate_asks_under_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decision: str
) -> None:
    code, said = validate(
        tmp_path, capsys, WORKFLOW.replace("decision: go-on", f"decision: {decision}")
    )
    assert code == ExitCode.BAD_INPUT, said
    assert problems(said, tmp_path / "wf.yaml") == [
        f"7: nodes[0].decision: gate 'ask' asks under the decision id {decision!r}, which "
        "phasegate asks its own decisions under (transition-warning, partial-phase, budget, "
        "conflict-*): set another decision id"
    ]


def test_gates_of_their_own_ids_are_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = validate(tmp_path, capsys, WORKFLOW)
    assert code == 0, said
