"""A reviewer's `timeout` may name a number of seconds in the item's data. When nothing set
that name (a misspelt name, an item never given it), or it holds no number, the review runs
under the default limit: `phasegate run` says so, one warning line naming the reviewer, the
node, the workflow file and the name, as a gate's timeout does, rather than giving the
review a limit the workflow did not mean without a word. 0 is the documented "the default"
and is said nothing about; a review asked again in the same run is not warned of twice."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_process import cli_in_process as cli
from phasegate import open_repo

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 3}}
roles: {writer: {access: write}, checker: {access: read-only}}
nodes:
  - id: draft
    executor: writer
    prompt: draft.md
    reviewers:
      - role: checker
        prompt: check.md
        timeout: check_seconds
        on: {APPROVED: pass, REJECTED: revise, UNCLEAR: revise}
    on: {pass: done}
  - id: done
    kind: end
"""

CONFIG = """\
version: 1
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
timeouts: {agent: 90}
"""

#: The checker asks for one revision, then approves: the review is asked twice.
AGENTS = """\
writer:
  "*": [{write: {"notes.txt": "notes\\n"}}]
checker:
  "*":
    - verdict:
        approved: false
        summary: Not yet
        issues: [{severity: blocker, description: more}]
    - {verdict: {approved: true, summary: Fine, issues: []}}
"""


def run_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any] | None
) -> tuple[int, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "wf").mkdir(parents=True, exist_ok=True)
    (folder / "wf.yaml").write_text(WORKFLOW)
    (folder / "prompts" / "wf" / "draft.md").write_text("Write notes.txt.\n")
    (folder / "prompts" / "wf" / "check.md").write_text("Check notes.txt.\n")
    (repo / ".phasegate" / "config.yaml").write_text(CONFIG)
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    open_repo(repo).new("one", workflow="wf", data=data)
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    return code, out + err


def warnings(said: str) -> list[str]:
    return [line for line in said.splitlines() if line.startswith("phasegate: warning:")]


def test_a_name_nothing_set_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = run_item(tmp_path, capsys, None)
    assert code == 0, said
    assert warnings(said) == [
        "phasegate: warning: reviewer 'checker' of node 'draft' (.phasegate/workflows/wf.yaml): "
        "its timeout names the item's data 'check_seconds', which is not set: the review "
        "takes the default limit, 90s (write the seconds as a number, or give the item "
        "'check_seconds', 0 for the default: Repo.new(data=...) or a plug-in sets it)"
    ], said


@pytest.mark.parametrize("value", ["ten", True, -5])
def test_a_value_that_is_no_number_of_seconds_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object
) -> None:
    code, said = run_item(tmp_path, capsys, {"check_seconds": value})
    assert code == 0, said
    found = warnings(said)
    assert len(found) == 1, said
    assert f"'check_seconds', which holds {value!r}, not a number of seconds:" in found[0]


@pytest.mark.parametrize("value", [0, 30, 2.5])
def test_a_number_or_zero_is_said_nothing_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float
) -> None:
    code, said = run_item(tmp_path, capsys, {"check_seconds": value})
    assert code == 0, said
    assert warnings(said) == [], said
