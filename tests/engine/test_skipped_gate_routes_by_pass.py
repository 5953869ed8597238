"""A gate (or an action) whose `when` does not hold is skipped and ends `pass`: its `on` may
map `pass` (validation took `pass` for an outcome it never has, and refused `on: {pass: ...}`),
and a skipped gate goes where that says. Without it, `pass` goes to the next node, and a gate
with `when` as the last node of its scope is refused: there is no next node."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate import plugins
from phasegate.errors import ExitCode

plugins.register("predicates", "wf-never-holds", lambda ctx: False)

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    when: wf-never-holds
    question: Approve the build?
    choices: {approve: build, reject: rejected}
    on: {pass: build}
  - id: rejected
    kind: end
    status: stopped
    message: rejected by a person
  - id: build
    kind: check
    run: [{name: ok, run: "true"}]
    on: {fail: rejected}
  - id: done
    kind: end
"""


def repo_with(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    (repo / ".phasegate" / "workflows").mkdir(parents=True, exist_ok=True)
    (repo / ".phasegate" / "workflows" / "wf.yaml").write_text(text)
    return repo


def test_a_skipped_gate_goes_where_its_pass_is_mapped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_with(tmp_path, capsys, WORKFLOW)
    code, out, err = cli(capsys, "new", "one", "--workflow", "wf", "-C", str(repo))
    assert code == 0, out + err
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == 0, out + err
    assert "rejected by a person" not in out + err
    code, out, err = cli(capsys, "status", "one", "--json", "-C", str(repo))
    assert code == 0, err
    assert '"status": "completed"' in out, out


def test_a_skipped_gate_with_nowhere_to_go_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
start: ask
nodes:
  - id: build
    kind: check
    run: [{name: ok, run: "true"}]
    on: {pass: done, fail: done}
  - id: done
    kind: end
  - id: ask
    kind: gate
    when: wf-never-holds
    question: Approve the build?
    choices: {approve: build, reject: done}
"""
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert "outcome 'pass' of node 'ask' is not mapped: it is the last node of its scope" in err
