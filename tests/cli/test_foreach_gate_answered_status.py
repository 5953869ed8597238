"""A gate inside a foreach body answered with `phasegate answer` before the next run: the
loop's item waits on that answer, it was not interrupted. `status` (text, --json, the item
list) and the SessionStart hook say the decision is answered and the next run acts on it,
as they do for a gate at the top level."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_process import run_cli

WORKFLOW = """\
name: fg
items_dir: fgitems
modes: {standard: {max_iterations: 2}}
roles: {dev: {access: write}}
nodes:
  - id: plan
    executor: dev
    outputs: [{file: plan.md, parser: markdown-tasks}]
    on: {pass: tasks}
  - id: tasks
    kind: foreach
    items: {parser: markdown-tasks, file: plan.md}
    body:
      - id: ask
        kind: gate
        question: "Keep task {{ task }}?"
        choices: {keep: {to: task-done}, drop: {to: task-done}}
      - id: task-done
        kind: end
  - id: done
    kind: end
"""

ANSWERED = "decision ask-1 answered (keep); the next run acts on it"


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    assert run_cli(path, "init").returncode == 0
    config = path / ".phasegate" / "config.yaml"
    config.write_text(config.read_text().replace("{backend: scripted}", "{backend: auto}"))
    folder = path / ".phasegate" / "workflows"
    (folder / "prompts" / "fg").mkdir(parents=True)
    (folder / "prompts" / "fg" / "plan.md").write_text("Plan {{ item }}\n")
    (folder / "fg.yaml").write_text(WORKFLOW)
    assert run_cli(path, "new", "g1", "--workflow", "fg", "-d", "z").returncode == 0
    return path


def hook_context(repo: Path) -> str:
    started = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    return str(json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"])


def loop_items(repo: Path) -> list[dict[str, object]]:
    status = json.loads(run_cli(repo, "status", "g1", "--json").stdout)
    [loop] = [p for p in status["phases"] if p["node"] == "tasks"]
    return list(loop["items"])


def test_a_pending_gate_in_a_loop_item_is_waiting(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    waiting = run_cli(repo, "run", "g1")
    assert waiting.returncode == 3, waiting.stderr
    assert [i["status"] for i in loop_items(repo)] == ["waiting"]
    shown = run_cli(repo, "status", "g1").stdout
    assert "interrupted" not in shown, shown
    assert "Phase: tasks, waiting on a decision" in shown


def test_an_answered_gate_in_a_loop_item_waits_for_the_next_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert run_cli(repo, "run", "g1").returncode == 3
    answered = run_cli(repo, "answer", "g1", "ask-1", "keep")
    assert answered.returncode == 0, answered.stderr

    status = json.loads(run_cli(repo, "status", "g1", "--json").stdout)
    [item] = loop_items(repo)
    assert item["status"] == "answered", item
    assert (item["decision"], item["answer"]) == ("ask-1", "keep")
    progress = status["inProgress"]
    assert (progress["stage"], progress["decision"], progress["answer"]) == (
        "answered",
        "ask-1",
        "keep",
    )
    assert status["pendingDecisions"] == []
    assert status["nextCommand"] == "phasegate run g1"

    shown = run_cli(repo, "status", "g1").stdout
    assert "interrupted" not in shown, shown
    assert f"Phase: tasks, {ANSWERED}" in shown, shown
    item_line = "1 placeholder task — answered (decision ask-1: keep; the next run acts on it)"
    assert item_line in shown, shown
    listed = run_cli(repo, "status").stdout
    assert "tasks (answered)" in listed, listed

    context = hook_context(repo)
    assert f"- Phase: tasks, {ANSWERED}" in context, context

    ran = run_cli(repo, "run", "g1")
    assert ran.returncode == 0, ran.stderr
    done = json.loads(run_cli(repo, "status", "g1", "--json").stdout)
    assert done["status"] == "completed"
    assert [i["status"] for i in loop_items(repo)] == ["done"]
