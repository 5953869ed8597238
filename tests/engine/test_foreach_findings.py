"""Findings on foreach loops: every checkbox of a plan is a task, a dependency must name a
task, and a merge conflict resolved by hand leaves no item shown as waiting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from parallel_helpers import FOLDER, ITEM, Agents, fan_repo, new_item, run, worktrees

from phasegate.api import open_repo
from phasegate.change.markdown import outline
from phasegate.change.taskformats import find_tasks
from phasegate.engine.state import read_state_file
from phasegate.errors import BadInputError, WaitingForHuman
from phasegate.parsers.markdown_tasks import MARKDOWN_TASKS

MIXED = "- [ ] T1: Add the model\n- [ ] T2: Add the API\n- [ ] Update the README\n"


def test_a_checkbox_without_an_id_is_a_task_keyed_by_its_position(tmp_path: Path) -> None:
    """markdown-tasks: every checkbox is a task, even when most others carry ids."""
    path = tmp_path / "tasks.md"
    path.write_text(MIXED)
    items = MARKDOWN_TASKS.parse(None, path).items  # type: ignore[arg-type]
    assert [(t.key, t.title) for t in items] == [
        ("T1", "Add the model"),
        ("T2", "Add the API"),
        ("3", "Update the README"),
    ]
    assert MARKDOWN_TASKS.count(path) == 3


def test_the_change_workflow_keeps_its_spec_kit_rule() -> None:
    """tasks.md of the change workflow (docs/change-workflow.md): when most checkboxes carry
    a spec-kit id, one without an id is not a task."""
    entries, _ = find_tasks(outline(MIXED))
    assert [e.id for e in entries] == ["T1", "T2"]


def test_a_foreach_runs_the_task_without_an_id(tmp_path: Path) -> None:
    """A foreach over a plan with ids on most tasks runs the one without an id too."""
    root = fan_repo(tmp_path / "repo", parallel=1)
    new_item(root)
    agents = Agents(tasks=MIXED, delay=0)
    assert run(root, agents).status == "completed"
    assert [t for role, t in agents.calls if role == "coder"] == ["T1", "T2", "3"]


def test_a_dependency_on_no_task_is_refused(tmp_path: Path) -> None:
    """``(after T99)`` naming no task of the file: refused, naming the file and the task."""
    path = tmp_path / "tasks.md"
    path.write_text("- [ ] T1: a (after T99)\n- [ ] T2: b (after T1)\n")
    with pytest.raises(BadInputError, match=r"tasks\.md.*T1.*T99") as caught:
        MARKDOWN_TASKS.parse(None, path)  # type: ignore[arg-type]
    assert str(path) in str(caught.value) and "line 1" in str(caught.value)
    problems = MARKDOWN_TASKS.problems(None, path)  # type: ignore[arg-type]
    assert len(problems) == 1 and "T99" in problems[0]
    path.write_text("- [ ] a\n- [ ] b (after 1)\n- [ ] T3: c (after 1, 2)\n")
    assert MARKDOWN_TASKS.problems(None, path) == []  # type: ignore[arg-type]
    items = MARKDOWN_TASKS.parse(None, path).items  # type: ignore[arg-type]
    assert [(t.key, t.deps) for t in items] == [("1", ()), ("2", ("1",)), ("T3", ("1", "2"))]


def test_a_loop_with_an_unknown_dependency_stops_with_exit_2(tmp_path: Path) -> None:
    """A deps-ordered loop whose plan names an unknown dependency does not start."""
    root = fan_repo(tmp_path / "repo", parallel=1)
    new_item(root)
    agents = Agents(tasks="- [ ] T1: a (after T99)\n- [ ] T2: b\n", delay=0)
    with pytest.raises(BadInputError, match=r"T1.*T99") as caught:
        run(root, agents)
    assert caught.value.exit_code == 2
    assert [c for c in agents.calls if c[0] == "coder"] == []


def status_json(root: Path) -> Any:
    out = subprocess.run(
        [sys.executable, "-m", "phasegate", "status", ITEM, "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=True,
    ).stdout
    return json.loads(out)


def find_item(found: Any, key: str) -> dict[str, Any] | None:
    """The row of foreach item ``key`` anywhere in a status document."""
    if isinstance(found, dict):
        if found.get("key") == key and "outcome" in found:
            return found
        values: Any = found.values()
    elif isinstance(found, list):
        values = found
    else:
        return None
    for value in values:
        row = find_item(value, key)
        if row is not None:
            return row
    return None


def test_a_conflict_resolved_by_hand_leaves_no_waiting_mark(tmp_path: Path) -> None:
    """Resolved by hand, answered and merged: the item is done, not shown as waiting."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = Agents(
        delay=0.05,
        files={"T1": {"src/shared.py": "RATE = 10\n"}, "T2": {"src/shared.py": "RATE = 20\n"}},
    )

    def special(request):  # type: ignore[no-untyped-def]
        from phasegate.agents.scripted import ScriptedReply

        if request.labels.get("stage") == "repair":
            return ScriptedReply(text="could not decide")
        return None

    agents.special = special
    with pytest.raises(WaitingForHuman, match="conflict-T2"):
        run(root, agents)
    (where,) = [Path(w) for w in worktrees(root) if "conflict-" in w]
    (where / "src" / "shared.py").write_text("RATE = 25\n")
    open_repo(root).answer(ITEM, "conflict-T2", "resolved")
    assert run(root, agents).status == "completed"
    assert (root / "src" / "shared.py").read_text() == "RATE = 25\n"
    state = read_state_file(root / FOLDER / ".engine.json").to_dict()
    entry = state["nodes"]["tasks"]["items"]["T2"]
    assert entry["status"] == "done" and "parked" not in entry
    row = find_item(status_json(root), "T2")
    assert row is not None and row["status"] == "done" and "reason" not in row
