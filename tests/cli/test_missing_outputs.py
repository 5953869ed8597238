"""A foreach over a file its producer never wrote (the producer completed with the
reviewer's concerns when its budget was spent, as seed 000 has it): the run stops blocked
(exit 4) naming the node that makes the file and the command that runs it again, and that
command works (a subprocess, scripted agents)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, judge: {}}
nodes:
  - id: plan
    executor: writer
    outputs: [tasks.md]
    reviewer: judge
  - id: tasks
    kind: foreach
    items: {file: tasks.md, parser: markdown-tasks}
    body:
      - id: build
        executor: writer
        outputs: ["{{ task }}.txt"]
      - id: built
        kind: end
  - id: e
    kind: end
"""
JUDGE = 'judge: {"*": [{verdict: {approved: true, summary: ok, issues: []}}]}\n'
SILENT = 'writer: {"*": [{text: "I wrote nothing"}]}\n' + JUDGE
WRITING = (
    'writer: {plan: [{write: {"{item_dir}/tasks.md": "- [ ] T1: one\\n"}}],'
    ' "*": [{write: {"{item_dir}/T1.txt": "x\\n"}}]}\n' + JUDGE
)


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def setup(root: Path) -> Path:
    repo = init_repo(root)
    assert phasegate(repo, "init").returncode == 0
    flows = repo / ".phasegate" / "workflows"
    (flows / "prompts" / "wf").mkdir(parents=True)
    for prompt in ("plan", "build", "judge"):
        (flows / "prompts" / "wf" / f"{prompt}.md").write_text("Do {{ node }} for {{ item }}\n")
    (flows / "wf.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text(SILENT)
    assert phasegate(repo, "new", "it", "-w", "wf").returncode == 0
    return repo


def test_a_foreach_over_a_file_never_written_names_the_node_to_run_again(
    tmp_path: Path,
) -> None:
    """It used to fail with exit 2 (bad input) at every run, while status advised running
    the item again."""
    repo = setup(tmp_path / "repo")
    ran = phasegate(repo, "run", "it")
    assert ran.returncode == ExitCode.BLOCKED, ran.stderr
    assert "plan complete" in ran.stdout + ran.stderr  # seed 000: the budget spent, with concerns
    line = ran.stderr.strip().splitlines()[-1]
    assert line == (
        "phasegate: error: wfitems/it/tasks.md does not exist, so the items of tasks cannot "
        "be read; plan completed without it: run it again with phasegate run it --phase plan "
        "--yes, then phasegate run it"
    )
    (repo / ".phasegate" / "agents.yaml").write_text(WRITING)
    redone = phasegate(repo, "run", "it", "--phase", "plan", "--yes")
    assert redone.returncode == 0, redone.stderr
    again = phasegate(repo, "run", "it")
    assert again.returncode == 0, again.stderr
    assert (repo / "wfitems" / "it" / "T1.txt").read_text() == "x\n"
    shown = json.loads(phasegate(repo, "status", "it", "--json").stdout)
    assert shown["status"] == "completed"
