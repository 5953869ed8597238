"""A repository workflow named like a built-in replaces it (docs/workflows.md). `phasegate
workflows` listed it as `team (repo)` only, so a user who named a workflow of their own so
never learnt the built-in was gone; it now says `(repo, replaces the built-in)` (`--json`:
`replacesBuiltIn: true`), valid or not, and still names the file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli

WORKFLOW = """\
name: team
items_dir: myteam
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: done
    kind: end
"""


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    code, _, err = cli(capsys, "init", "-C", str(root))
    assert code == 0, err
    (root / ".phasegate" / "workflows").mkdir(parents=True, exist_ok=True)
    return root


def listing(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, dict[str, dict]]:
    code, out, err = cli(capsys, "workflows", "-C", str(repo))
    assert code == 0, err
    code, shown, err = cli(capsys, "workflows", "--json", "-C", str(repo))
    assert code == 0, err
    return out, {row["name"]: row for row in json.loads(shown)}


def test_a_workflow_named_like_a_built_in_says_it_replaces_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = repo / ".phasegate" / "workflows" / "team.yaml"
    path.write_text(WORKFLOW)
    out, rows = listing(repo, capsys)
    assert "team (repo, replaces the built-in) " in out, out
    assert f"    file: {path}" in out, out
    assert rows["team"]["replacesBuiltIn"] is True
    assert "replacesBuiltIn" not in rows["feature"]
    path.write_text(WORKFLOW.replace("modes:", "mode:"))
    out, rows = listing(repo, capsys)
    assert "team (repo, replaces the built-in, invalid): " in out, out


def test_a_workflow_of_its_own_name_is_listed_as_before(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / ".phasegate" / "workflows" / "crew.yaml").write_text(
        WORKFLOW.replace("name: team", "name: crew")
    )
    out, rows = listing(repo, capsys)
    assert "crew (repo) " in out, out
    assert "replacesBuiltIn" not in rows["crew"]
