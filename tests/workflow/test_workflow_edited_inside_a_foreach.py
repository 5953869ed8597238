"""A workflow edited while one of its items waits inside a foreach body: the node the item's
loop is at renamed or removed. The next command on the item said `internal error:
ValueError: 'sure' is not in list`; it now says, as for a top-level node, which node the item
is at, that the workflow no longer has it and how to go on (exit 5, nothing changed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: fe
items_dir: fe
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: plan
    executor: writer
    outputs: [{file: plan.md, parser: markdown-tasks}]
  - id: tasks
    kind: foreach
    items: {parser: markdown-tasks, file: plan.md}
    body:
      - id: sure
        kind: gate
        question: Do {{ task }}?
        choices: {go: fin, skip: fin}
      - id: fin
        kind: end
  - id: done
    kind: end
"""


def test_a_body_node_renamed_while_an_item_is_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text().replace("backend: scripted", "backend: auto"))
    workflows = repo / ".phasegate" / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    (workflows / "prompts" / "fe").mkdir(parents=True)
    (workflows / "prompts" / "fe" / "plan.md").write_text("Plan {{ item }}.\n")
    (workflows / "fe.yaml").write_text(WORKFLOW)
    code, _, err = cli(capsys, "new", "one", "--workflow", "fe", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    engine = repo / "fe" / "one" / ".engine.json"
    before = engine.read_bytes()
    (workflows / "fe.yaml").write_text(WORKFLOW.replace("id: sure", "id: confirm"))
    for command in ("run", "status"):
        code, out, err = cli(capsys, command, "one", "-C", str(repo))
        assert code == ExitCode.STATE, out + err
        assert "internal error" not in err, err
        assert (
            "unknown node 'sure' in the body of foreach 'tasks' of workflow 'fe' (its nodes: "
            "confirm, fin): item 1 of the loop is at a node the workflow no longer has: the "
            "workflow"
        ) in err, err
        assert "(put node 'sure' back in the workflow to go on)" in err, err
    assert engine.read_bytes() == before
