"""An agent node may map the outcome `failed` in its `on`: when its executor's call fails
every attempt, the node ends `failed` (journaled with the error, `agent.gave_up`) and the
walk goes where `on.failed` says. Unmapped, the run stops on the failed call (exit 6) as
before; mapped to an unknown node, `phasegate validate` names it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: write
    executor: writer
    prompt: write.md
    ON
  - id: done
    kind: end
"""
GAVE_UP = """\
  - id: gave-up
    kind: end
    status: stopped
    message: the writer failed
"""
FAILING = {"writer": {"write": [{"fail": {"exit": 1, "error": "the model is overloaded"}}]}}


def run_item(tmp_path: Path, capsys: pytest.CaptureFixture[str], on: str) -> tuple[int, str, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
    }
    (repo / ".phasegate" / "config.yaml").write_text(json.dumps(config) + "\n")
    (repo / ".phasegate" / "agents.yaml").write_text(json.dumps(FAILING))
    (repo / ".phasegate" / "workflows").mkdir(parents=True, exist_ok=True)
    (repo / ".phasegate" / "workflows" / "wf.yaml").write_text(
        WORKFLOW.replace("ON", on) + (GAVE_UP if "gave-up" in on else "")
    )
    (repo / ".phasegate" / "prompts" / "wf").mkdir(parents=True)
    (repo / ".phasegate" / "prompts" / "wf" / "write.md").write_text("Write it.\n")
    code, out, err = cli(capsys, "new", "one", "--workflow", "wf", "-C", str(repo))
    assert code == 0, out + err
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    return code, out + err, repo


def _events(repo: Path) -> list[dict[str, object]]:
    journal = repo / "wfitems" / "one" / ".journal.jsonl"
    return [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]


def test_a_mapped_failure_goes_where_on_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said, repo = run_item(tmp_path, capsys, "on: {failed: gave-up, pass: done}")
    assert code != ExitCode.AGENT, said
    assert "the writer failed" in said, said
    gave_up = [e for e in _events(repo) if e.get("event") == "agent.gave_up"]
    assert [(e["role"], e["error"], e["attempts"]) for e in gave_up] == [
        ("writer", "the model is overloaded", 2)
    ], gave_up
    moved = [e for e in _events(repo) if e.get("event") == "node.transition"]
    assert [(e["node"], e["to"], e["outcome"]) for e in moved] == [
        ("write", "gave-up", "failed")
    ], moved


def test_an_unmapped_failure_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said, repo = run_item(tmp_path, capsys, "on: {pass: done}")
    assert code == ExitCode.AGENT, said
    assert "the model is overloaded" in said, said
    assert not [e for e in _events(repo) if e.get("event") == "agent.gave_up"]


def test_failed_mapped_to_an_unknown_node_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.replace("ON", "on: {failed: gave-upp}") + GAVE_UP)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert "nodes[0].on.failed: unknown node 'gave-upp'" in out + err, out + err
