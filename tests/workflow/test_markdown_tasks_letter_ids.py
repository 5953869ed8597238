"""The ``markdown-tasks`` parser keys a task by its own id: ``- [ ] S1 ...`` is item S1,
and ``(after S1)`` names it; a file whose tasks do not all carry one keys them by position."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli

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
      - id: b
        executor: w
        prompt: b.md
      - id: bend
        kind: end
  - id: fin
    kind: end
"""


def run_with_list(tmp_path: Path, capsys: pytest.CaptureFixture[str], tasks: str) -> Path:
    """Run workflow ``f``, whose first step writes ``tasks`` as its list; the item folder."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "f").mkdir(parents=True)
    for prompt in ("mk", "b"):
        (folder / "prompts" / "f" / f"{prompt}.md").write_text("Do {{ node }}\n")
    (folder / "f.yaml").write_text(WORKFLOW)
    escaped = tasks.replace("\n", "\\n")
    (repo / ".phasegate" / "agents.yaml").write_text(
        "w:\n"
        f'  mk: [{{write: {{"{{item_dir}}/list.md": "{escaped}"}}}}]\n'
        '  "*": [{write: {"{item_dir}/done-{task}.md": "x\\n"}}]\n'
    )
    assert cli(capsys, "new", "f1", "-w", "f", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == 0, (out, err)
    return repo / "fitems" / "f1"


def test_a_letter_id_is_the_task_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    item_dir = run_with_list(tmp_path, capsys, "- [ ] S1 do x\n- [ ] S2: do y (after S1)\n")
    assert (item_dir / "done-S1.md").exists()
    assert (item_dir / "done-S2.md").exists()


def test_tasks_without_ids_all_round_are_keyed_by_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    item_dir = run_with_list(tmp_path, capsys, "- [ ] S1 do x\n- [ ] tidy up\n")
    assert (item_dir / "done-1.md").exists()
    assert (item_dir / "done-2.md").exists()
