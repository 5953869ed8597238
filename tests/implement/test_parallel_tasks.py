"""Parallel tasks of a plan (seed 004: Performance Optimizations, Parallel Execution, and
its integration test "Parallel task execution"): the built-in workflow runs a phase's
tasks marked parallel at once, each in its own git worktree, synchronises at the phase's
end, and ticks PLAN.md in the work tree without conflicts."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, Team, git, journal, key, make_repo, new_item, run

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

#: Two parallel tasks (reviewed), one task waiting for both, then a sequential phase.
PHASES = """# Plan

## Phase 1: Delivery
**Execution: Parallel**

- [ ] **Write the retry code** [`agent: the-developer`]
- [ ] **Document the headers** [`agent: the-technical-writer`]
- [ ] **Add delivery metrics** [`agent: the-developer`] [`review: false`] [`parallel: false`]

## Phase 2: Wiring

- [ ] **Wire the dispatcher** [`agent: the-developer`] [`review: false`]
"""
RETRY, HEADERS, METRICS, WIRE = (
    "Write the retry code",
    "Document the headers",
    "Add delivery metrics",
    "Wire the dispatcher",
)
FILES = {
    "Create the table": "db/table.sql",
    "Sign payloads": "src/sign.py",
    RETRY: "src/retry.py",
    HEADERS: "docs/headers.md",
    METRICS: "src/metrics.py",
    WIRE: "src/wire.py",
}
TITLES = {key(title): title for title in FILES}
#: How long a task that must run alongside another waits for it before giving up.
MEET_TIMEOUT = 15.0


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


class Agents:
    """Scripted agents for every role: implementers write their task's file; the tasks in
    ``meet`` wait (up to MEET_TIMEOUT) until both have started, so they succeed only when
    they run at the same time; reviewers answer ``reviews[title]`` (else APPROVED)."""

    def __init__(self, meet: tuple[str, ...] = (), tick_own_box: bool = False) -> None:
        self.meet = meet
        self.barrier = threading.Barrier(len(meet) or 1, timeout=MEET_TIMEOUT)
        self.met: set[str] = set()
        self.tick_own_box = tick_own_box
        self.spans: dict[str, tuple[float, float]] = {}
        self.workdirs: dict[str, Path] = {}
        self.seen: dict[str, set[str]] = {}
        self.reviews: dict[str, list[str]] = {}
        self.lock = threading.Lock()
        self.team = Team({"*": {"*": [self.reply]}})

    def reply(self, request: AgentRequest) -> dict[str, Any]:
        title = TITLES[request.labels["task"]]
        if request.labels.get("stage") == "review":
            answers = self.reviews.get(title) or ["APPROVED"]
            cycle = max(1, int(request.labels.get("iteration", "1")))
            return {"text": answers[min(cycle, len(answers)) - 1]}
        started = time.monotonic()
        workdir = request.workdir
        if title in self.meet:
            try:
                self.barrier.wait()
                with self.lock:
                    self.met.add(title)
            except threading.BrokenBarrierError:
                pass  # ran alone: the test says so
        if self.tick_own_box:  # an agent ticking its own task, as agents often do
            plan = workdir / PLAN
            plan.write_text(plan.read_text().replace(f"- [ ] **{title}**", f"- [x] **{title}**"))
        time.sleep(0.2)
        with self.lock:
            self.spans[title] = (started, time.monotonic())
            self.workdirs[title] = workdir
            self.seen[title] = {t for t, f in FILES.items() if (workdir / f).exists()}
        return {"write": {FILES[title]: f"# {title}\n"}, "text": "done"}

    def review_prompts(self, title: str) -> list[str]:
        return [
            r.prompt_text()
            for r in self.team.calls(stage="review")
            if r.labels["task"] == key(title)
        ]


def worktrees(root: Path) -> list[str]:
    return [
        line.split(" ", 1)[1]
        for line in git(root, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]


def test_the_parallel_tasks_of_a_phase_run_at_once_and_the_phase_ends_with_them(
    tmp_path: Path,
) -> None:
    """Parallel Execution: the built-in workflow runs the two parallel tasks at the same
    time (each waits until the other has started), each in its own worktree, reviewed on
    its own changes; the task marked sequential starts after both, with their work; the
    next phase starts after the merged work is in the work tree; every checkbox is ticked
    (the agents' own ticks in their worktrees never conflict) and no worktree is left."""
    root = make_repo(tmp_path / "repo", PHASES)
    agents = Agents(meet=(RETRY, HEADERS), tick_own_box=True)
    outcome = run(new_item(root), agents.team)
    assert outcome.status == "completed", outcome.message
    assert agents.met == {RETRY, HEADERS}
    for title in (RETRY, HEADERS):
        assert agents.workdirs[title].parent == root / ".phasegate" / "worktrees"
        assert agents.spans[title][1] <= agents.spans[METRICS][0]
    assert agents.workdirs[RETRY] != agents.workdirs[HEADERS]
    # Each review shows the task's own changes, not the other parallel task's.
    (retry_review,) = agents.review_prompts(RETRY)
    assert "src/retry.py" in retry_review and "docs/headers.md" not in retry_review
    (headers_review,) = agents.review_prompts(HEADERS)
    assert "docs/headers.md" in headers_review and "src/retry.py" not in headers_review
    # Synchronised: the later task sees both; the next phase sees the phase's merged work.
    assert agents.seen[METRICS] >= {RETRY, HEADERS}
    assert agents.workdirs[WIRE] == root
    assert agents.seen[WIRE] >= {RETRY, HEADERS, METRICS}
    assert (root / PLAN).read_text() == PHASES.replace("- [ ]", "- [x]")
    for title in (RETRY, HEADERS, METRICS, WIRE):
        assert (root / FILES[title]).read_text() == f"# {title}\n"
    assert worktrees(root) == [str(root)]
    assert git(root, "branch", "--list", "phasegate-tasks/*") == ""
    restored = {e["task"] for e in journal(root) if e["event"] == "implement.plan_restored"}
    # The task of the next phase ran in the work tree: its own tick was put back too.
    assert restored == {key(RETRY), key(HEADERS), key(METRICS), key(WIRE)}


def test_a_phase_without_parallel_marks_runs_in_the_work_tree(tmp_path: Path) -> None:
    """Sequential tasks (each waiting for the one before) run one after another in the work
    tree itself, as before: only the phase with parallel tasks fans out into worktrees, and
    nothing is committed to the repository's branch."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    agents = Agents()
    assert run(new_item(root), agents.team).status == "completed"
    assert agents.workdirs["Create the table"] == root
    assert agents.workdirs["Sign payloads"] == root
    assert agents.spans["Create the table"][1] <= agents.spans["Sign payloads"][0]
    assert agents.workdirs[RETRY] != root
    second = parse_plan(PLAN_TEXT, Path("PLAN.md")).phases[1]
    started = [e["node"] for e in journal(root) if e["event"] == "fanout.started"]
    assert started == [f"phases[{second.key}]/tasks"]
    assert git(root, "log", "--format=%s") == "init\n"
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")


def test_jobs_one_runs_the_built_in_exactly_as_one_task_after_another(tmp_path: Path) -> None:
    """--jobs 1: the parallel tasks run one after another in the work tree, with the same
    agent calls, journal events, plan and files as the workflow without a parallel loop."""

    def one_run(root: Path, **options: Any) -> tuple[list[Any], list[str], dict[str, str]]:
        agents = Agents()
        assert run(new_item(root), agents.team, **options).status == "completed"
        calls = [
            (r.role, r.labels["stage"], r.labels["task"], r.labels.get("iteration"), r.workdir)
            for r in agents.team.backend.requests
        ]
        events = [e["event"] for e in journal(root)]
        files = {f: (root / f).read_text() for f in [PLAN, *FILES.values()] if (root / f).exists()}
        return [(*c[:4], c[4] == root) for c in calls], events, files

    sequential = make_repo(tmp_path / "sequential", PHASES)
    folder = sequential / ".phasegate" / "workflows"
    (folder / "prompts").mkdir(parents=True)
    text = (BUILTIN_DIR / "implement.yaml").read_text(encoding="utf-8")
    assert "        parallel: 3\n" in text
    (folder / "implement.yaml").write_text(text.replace("        parallel: 3\n", ""))
    shutil.copytree(BUILTIN_DIR / "prompts" / "implement", folder / "prompts" / "implement")
    git(sequential, "add", "-A")
    git(sequential, "commit", "-q", "-m", "implement without a parallel loop")

    expected = one_run(sequential)
    found = one_run(make_repo(tmp_path / "jobs1", PHASES), jobs=1)
    assert found == expected
    assert "fanout.started" not in found[1]
    assert all(in_work_tree for *_, in_work_tree in found[0])
