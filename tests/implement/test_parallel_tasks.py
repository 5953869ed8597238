"""Parallel tasks of a plan (seed 004: Performance Optimizations, Parallel Execution;
"Execution: Parallel" and `[parallel: true]` marks): each task's dependencies follow the
marks, so a parallel foreach runs a phase's parallel tasks at once and its sequential
ones one after another, and PLAN.md is ticked in the work tree without conflicts."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, Team, git, key, make_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.implement.plan import parse_plan
from phasegate.implement.plugins import task_dependencies
from phasegate.workflow.registry import BUILTIN_DIR

PLAN_TEXT = """# Plan

## Phase 1: Setup
**Execution: Sequential**

- [ ] **Create the table** [`agent: the-data-engineer`] [`review: false`]
- [x] **Sketch the loop** [`agent: the-developer`] [`review: false`]
- [ ] **Sign payloads** [`agent: the-developer`] [`review: false`]

## Phase 2: Retries and docs
**Execution: Parallel**

- [ ] **Write the retry code** [`agent: the-developer`] [`review: false`]
- [ ] **Document the headers** [`agent: the-technical-writer`] [`review: false`]
- [ ] **Add delivery metrics** [`agent: the-developer`] [`review: false`] [`parallel: false`]
"""
FILES = {
    "Create the table": "db/table.sql",
    "Sign payloads": "src/sign.py",
    "Write the retry code": "src/retry.py",
    "Document the headers": "docs/headers.md",
    "Add delivery metrics": "src/metrics.py",
}


def test_dependencies_follow_the_plans_parallel_marks() -> None:
    """A sequential task waits for every task before it (ticked ones too, so a ticked task
    between two open ones never lets them overlap); a parallel task waits for the tasks up
    to the last sequential one before it."""
    plan = parse_plan(PLAN_TEXT, Path("PLAN.md"))
    first, second = (list(p.tasks) for p in plan.phases)
    assert task_dependencies(first) == [
        (),
        (first[0].key,),
        (first[0].key, first[1].key),
    ]
    assert task_dependencies(second) == [
        (),
        (),
        (second[0].key, second[1].key),
    ]


class Timed:
    """Scripted agents that take a moment and remember when each task ran."""

    def __init__(self) -> None:
        self.spans: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()
        reply: dict[str, Any] = {"*": [self.work]}
        self.team = Team({name: reply for name in ("the-developer", "the-technical-writer", "*")})
        self.titles = {key(title): title for title in FILES}

    def work(self, request: AgentRequest) -> dict[str, Any]:
        title = self.titles[request.labels["task"]]
        started = time.monotonic()
        time.sleep(0.6)
        with self.lock:
            self.spans[title] = (started, time.monotonic())
        return {"write": {FILES[title]: f"# {title}\n"}, "text": "done"}

    def overlap(self, a: str, b: str) -> bool:
        (a0, a1), (b0, b1) = self.spans[a], self.spans[b]
        return a0 < b1 and b0 < a1


def parallel_copy(root: Path) -> None:
    """The repository's own implement workflow: the built-in with `parallel: 4`."""
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts").mkdir(parents=True)
    text = (BUILTIN_DIR / "implement.yaml").read_text(encoding="utf-8")
    marker = "        order: deps\n"
    assert marker in text
    (folder / "implement.yaml").write_text(text.replace(marker, marker + "        parallel: 4\n"))
    shutil.copytree(BUILTIN_DIR / "prompts" / "implement", folder / "prompts" / "implement")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "parallel implement")


def test_a_parallel_foreach_runs_the_parallel_tasks_at_once_and_ticks_them_all(
    tmp_path: Path,
) -> None:
    """With `parallel: 4`, Phase 2's two parallel tasks overlap; the sequential tasks of
    Phase 1 and the `[parallel: false]` task after them do not; adjacent checkboxes are
    all ticked in the work tree, with every task's file there too."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    parallel_copy(root)
    timed = Timed()
    outcome = run(new_item(root), timed.team)
    assert outcome.status == "completed", outcome.message
    assert timed.overlap("Write the retry code", "Document the headers")
    assert not timed.overlap("Create the table", "Sign payloads")
    for earlier in ("Write the retry code", "Document the headers"):
        assert timed.spans[earlier][1] <= timed.spans["Add delivery metrics"][0]
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")
    for path in FILES.values():
        assert (root / path).is_file(), path
