"""A gate inside a foreach body asks each item on its own: its default decision id names
the item (``ask-T2``), and one answer never goes through for the next item unasked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: f
items_dir: fitems
modes: {standard: {max_iterations: 2}}
roles: {w: {access: write}}
nodes:
  - id: mk
    executor: w
    outputs: [list.md]
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: list.md}
    body:
      - id: ask
        kind: gate
        question: "Do {{ task }} ({{ task_title }})?"
        choices: {go: {to: b}, skip: {to: bend}}
      - id: b
        executor: w
        prompt: b.md
      - id: bend
        kind: end
  - id: fin
    kind: end
"""

AGENTS = """\
w:
  mk: [{write: {"{item_dir}/list.md": "- [ ] T1 one\\n- [ ] T2 delete prod db\\n"}}]
  "*": [{write: {"{item_dir}/done-{task}.md": "x\\n"}}]
"""


def make_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str], workflow: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "f").mkdir(parents=True)
    for prompt in ("mk", "b"):
        (folder / "prompts" / "f" / f"{prompt}.md").write_text("Do {{ node }}\n")
    (folder / "f.yaml").write_text(workflow)
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    return repo


def pending(capsys: pytest.CaptureFixture[str], repo: Path) -> list[dict[str, object]]:
    code, out, err = cli(capsys, "decisions", "f1", "--json", "-C", str(repo))
    assert code == 0, err
    found = json.loads(out)
    return found if isinstance(found, list) else found["decisions"]


def test_each_item_of_a_sequential_body_is_asked_its_own_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answering the gate for T1 does not answer it for T2: the run stops again at T2's."""
    repo = make_repo(tmp_path, capsys, WORKFLOW)
    item_dir = repo / "fitems" / "f1"
    assert cli(capsys, "new", "f1", "-w", "f", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.WAITING, (out, err)
    assert "Do T1 (one)?" in err
    [first] = pending(capsys, repo)
    assert first["id"] == "ask-T1"
    code, _, err = cli(capsys, "answer", "f1", "ask-T1", "go", "-C", str(repo))
    assert code == 0, err

    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.WAITING, (out, err)
    assert "Do T2 (delete prod db)?" in err
    assert "phasegate answer f1 ask-T2" in err
    assert (item_dir / "done-T1.md").exists()
    assert not (item_dir / "done-T2.md").exists()
    [second] = pending(capsys, repo)
    assert second["id"] == "ask-T2"

    assert cli(capsys, "answer", "f1", "ask-T2", "skip", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == 0, (out, err)
    assert not (item_dir / "done-T2.md").exists()


def test_a_decision_recorded_under_the_bare_gate_id_is_kept_on_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An item that waits at T1's gate under the id ``ask`` (as earlier versions named it)
    is answered with that id and goes on; T2 is then asked as ``ask-T2``."""
    repo = make_repo(tmp_path, capsys, WORKFLOW)
    item_dir = repo / "fitems" / "f1"
    assert cli(capsys, "new", "f1", "-w", "f", "-C", str(repo))[0] == 0
    assert cli(capsys, "run", "f1", "-C", str(repo))[0] == ExitCode.WAITING
    state_file = item_dir / ".engine.json"
    state = json.loads(state_file.read_text())
    record = state["decisions"].pop("ask-T1")
    assert record["context"] == "each[T1]/ask"
    state["decisions"]["ask"] = {**record, "id": "ask"}
    state_file.write_text(json.dumps(state))

    code, _, err = cli(capsys, "answer", "f1", "ask", "go", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.WAITING, (out, err)
    assert (item_dir / "done-T1.md").exists()
    assert "phasegate answer f1 ask-T2" in err
    assert not (item_dir / "done-T2.md").exists()


def test_a_written_decision_id_in_a_body_must_name_the_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``decision: ask`` in a foreach body would be one answer for every item: refused."""
    text = WORKFLOW.replace("        kind: gate\n", "        kind: gate\n        decision: ask\n")
    repo = make_repo(tmp_path, capsys, text)
    path = repo / ".phasegate" / "workflows" / "f.yaml"
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, (out, err)
    [line] = [line for line in err.splitlines() if line.startswith(f"{path}:")]
    assert ".decision: " in line, line
    assert "decision: ask-{{ task }}" in line and "each item is asked on its own" in line
