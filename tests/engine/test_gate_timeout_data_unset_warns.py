"""A gate's `timeout: {minutes: NAME}` reads the number of minutes from the item's data. When
nothing set NAME (a misspelt name, an item never given it), or it holds no number, the decision
never times out: `phasegate run` says so as the gate is reached, one warning line naming the
gate, the workflow file and the name, rather than waiting for ever without a word. 0 is the
documented "no timeout" and is said nothing about."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_process import cli_in_process as cli
from phasegate import open_repo
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    question: Go on?
    ask: command
    timeout: {minutes: soon, choice: go}
    choices: {go: {to: done}, stop: {to: done}}
  - id: done
    kind: end
"""


def run_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any] | None
) -> tuple[int, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    (repo / ".phasegate" / "workflows").mkdir(parents=True, exist_ok=True)
    (repo / ".phasegate" / "workflows" / "wf.yaml").write_text(WORKFLOW)
    open_repo(repo).new("one", workflow="wf", data=data)
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    return code, out + err


def warnings(said: str) -> list[str]:
    return [line for line in said.splitlines() if line.startswith("phasegate: warning:")]


def test_a_name_nothing_set_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, said = run_item(tmp_path, capsys, None)
    assert code == ExitCode.WAITING, said
    assert warnings(said) == [
        "phasegate: warning: gate 'ask' (.phasegate/workflows/wf.yaml): its timeout.minutes "
        "names the item's data 'soon', which is not set: the decision does not time out "
        "(write the minutes as a number, or give the item 'soon', 0 for no timeout: "
        "Repo.new(data=...) or a plug-in sets it)"
    ], said


@pytest.mark.parametrize("value", ["ten", True, -5])
def test_a_value_that_is_no_number_of_minutes_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object
) -> None:
    code, said = run_item(tmp_path, capsys, {"soon": value})
    assert code == ExitCode.WAITING, said
    found = warnings(said)
    assert len(found) == 1, said
    assert f"'soon', which holds {value!r}, not a number of minutes:" in found[0], found


@pytest.mark.parametrize("value", [0, 30, 2.5])
def test_a_number_or_zero_is_said_nothing_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float
) -> None:
    code, said = run_item(tmp_path, capsys, {"soon": value})
    assert code == ExitCode.WAITING, said
    assert warnings(said) == [], said


def test_validate_warns_when_no_plug_in_of_the_workflow_sets_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0, out + err
    assert err.splitlines() == [
        f"phasegate: warning: {path}:10: nodes[0].timeout.minutes: gate 'ask' takes its minutes "
        "from the item's data 'soon', which no plug-in of this workflow sets: unless the item "
        "is created with it (Repo.new(data=...)), the gate never times out (write the minutes "
        "as a number)"
    ], err


def test_validate_says_nothing_when_an_action_may_set_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(
        WORKFLOW.replace(
            "nodes:\n", "nodes:\n  - id: prepare\n    kind: action\n    action: proceed\n"
        )
    )
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0, out + err
    assert "warning" not in err, err
