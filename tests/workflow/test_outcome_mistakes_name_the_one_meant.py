"""An `on` key that is none of the node's outcomes says what was likely meant: a gate's choice
name (a choice leads to its own node, not through `on`), or the outcome spelt alike; a gate's
`timeout` choice that is not one of its choices is said at `timeout.choice`. `phasegate
validate` refuses each, one line naming the file, line and field, exit code 2."""

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
  - id: t
    kind: check
    run: [{name: t, run: "true"}]
    on: {pass: ask, fail: done}
  - id: ask
    kind: gate
    question: Go on?
    timeout: {minutes: 3, choice: yes}
    choices: {yes: done, no: t}
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


def test_a_choice_mapped_in_on_says_a_choice_leads_to_its_own_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "    choices: {yes", "    on: {no: done}\n    choices: {yes")
    assert found == [
        "13: nodes[1].on.no: node 'ask' never ends with outcome 'no' (its outcomes: exhausted, "
        "invalid): 'no' is a choice, and a choice leads to its own node (choices: {no: NODE}), "
        "not through on"
    ]


def test_a_misspelt_outcome_names_the_one_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "fail: done}", "failed: done}")
    assert found[0] == (
        "8: nodes[0].on.failed: node 't' never ends with outcome 'failed' (its outcomes: "
        "exhausted, fail, pass); did you mean 'fail'?"
    ), found


def test_a_timeout_choice_not_offered_is_said_at_timeout_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "choice: yes}", "choice: later}")
    assert found == ["12: nodes[1].timeout.choice: 'later' is not one of the choices (yes, no)"]


def test_a_misspelt_node_names_the_one_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "{yes: done, no: t}", "{yes: dnoe, no: t}")
    assert found == [
        "13: nodes[1].choices.yes: unknown node 'dnoe' (t, ask, done); did you mean 'done'?"
    ]


def test_blocked_without_its_at_sign_names_blocked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "{yes: done, no: t}", "{yes: done, no: blocked}")
    assert found == [
        "13: nodes[1].choices.no: unknown node 'blocked' (t, ask, done); did you mean "
        "'@blocked' (in quotes)?"
    ]


def test_blocked_unquoted_says_to_quote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = problems(tmp_path, capsys, "{yes: done, no: t}", "{yes: done, no: @blocked}")
    assert found == [
        "13:30: invalid YAML: found character '@' that cannot start any token: a value that "
        "starts with '@' is written in quotes (\"@blocked\")"
    ]
