"""Benchmark (``make bench``): the makespan of a parallel foreach against its lower bound.

Synthetic plans of 50 and 200 tasks with random dependencies (each task
depends on up to two of the ten tasks before it, each with probability
0.3), one agent call per task that sleeps a random 50-500 ms (no CPU). The
plan runs through the real engine (state commits, journal, scheduler) at
N = 1, 4 and 8 items at once (``isolation: none``: the scheduler's cost, not
git's; one run with worktrees is shown for comparison). The lower bound is
max(critical path, total work / N); the goal is a makespan within 1.05x of
it. The engine's own cost per call is the makespan above the total work at
N = 1, divided by the calls. The same schedule is also simulated with no
engine at all (ready items start longest chain of dependents first, then in
plan order, as the scheduler starts them), and in plan order alone for
comparison: the scheduler knows no task's duration, so that schedule, not
the bound, is what the engine can reach. Figures from one run on this machine.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

GOAL = 1.05

WORKFLOW = """\
name: fanbench
items_dir: work
default_mode: standard
modes:
  standard: {{max_iterations: 1}}
roles:
  planner: {{access: write}}
  worker: {{access: write}}
nodes:
  - id: plan
    executor: planner
    outputs: [tasks.md]
  - id: tasks
    kind: foreach
    items: {{parser: markdown-tasks, file: tasks.md}}
    order: deps
    parallel: 8
    isolation: {isolation}
    conflicts: {{attempts: 0}}
    body:
      - id: work
        executor: worker
      - id: worked
        kind: end
  - id: done
    kind: end
"""


def plan(size: int, seed: int) -> tuple[str, dict[str, float], dict[str, list[str]]]:
    """A task list, each task's sleep, and its dependencies."""
    rng = random.Random(seed)
    sleeps: dict[str, float] = {}
    deps: dict[str, list[str]] = {}
    lines = ["# Tasks", ""]
    for i in range(1, size + 1):
        key = f"T{i}"
        sleeps[key] = rng.uniform(0.05, 0.5)
        earlier = [f"T{j}" for j in range(max(1, i - 10), i)]
        deps[key] = sorted(
            {d for d in rng.sample(earlier, min(2, len(earlier))) if rng.random() < 0.3}
        )
        after = f" (after {', '.join(deps[key])})" if deps[key] else ""
        lines.append(f"- [ ] {key}: task {i}{after}")
    return "\n".join(lines) + "\n", sleeps, deps


def bound(sleeps: dict[str, float], deps: dict[str, list[str]], jobs: int) -> float:
    finish: dict[str, float] = {}
    for key in sleeps:  # keys are in dependency order
        finish[key] = sleeps[key] + max((finish[d] for d in deps[key]), default=0.0)
    return max(max(finish.values()), sum(sleeps.values()) / jobs)


def ideal(
    sleeps: dict[str, float], deps: dict[str, list[str]], jobs: int, *, plan_order: bool = False
) -> float:
    """The makespan of the same schedule with no engine at all (the scheduler's own rule:
    with more than one slot, ready items start longest chain of dependents first, then in
    plan order); ``plan_order``: ready items start in plan order alone, for comparison."""
    import heapq

    keys = list(sleeps)
    dependents: dict[str, list[str]] = {k: [] for k in keys}
    for key in keys:
        for dep in deps[key]:
            dependents[dep].append(key)
    height: dict[str, int] = {}
    for key in reversed(keys):
        height[key] = 1 + max((height[k] for k in dependents[key]), default=0)
    if plan_order or jobs == 1:
        height = dict.fromkeys(keys, 1)
    order = sorted(keys, key=lambda k: (-height[k], keys.index(k)))
    now, running, done, started = 0.0, [], set(), set()
    while len(done) < len(keys):
        for key in order:
            if len(running) >= jobs:
                break
            if key not in started and all(d in done for d in deps[key]):
                started.add(key)
                heapq.heappush(running, (now + sleeps[key], key))
        now, key = heapq.heappop(running)
        done.add(key)
    return now


def run_once(
    size: int, jobs: int, isolation: str, seed: int
) -> tuple[float, float, float, float, int]:
    """(makespan in seconds, the lower bound, the engine-free schedule, the engine-free
    schedule in plan order, calls) of one run."""
    from phasegate.agents.base import AgentRequest
    from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
    from phasegate.api import open_repo
    from phasegate.engine.runner import RunOptions

    text, sleeps, deps = plan(size, seed)
    root = Path(tempfile.mkdtemp(prefix="phasegate-fanbench-"))
    try:
        env = ["-c", "user.name=b", "-c", "user.email=b@example.invalid"]
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
        (root / "README.md").write_text("bench\n")
        folder = root / ".phasegate" / "workflows"
        (folder / "prompts" / "fanbench").mkdir(parents=True)
        (folder / "prompts" / "fanbench" / "work.md").write_text("Do {{ task }}.\n")
        (folder / "prompts" / "fanbench" / "plan.md").write_text("Write the tasks.\n")
        (folder / "fanbench.yaml").write_text(WORKFLOW.format(isolation=isolation))
        subprocess.run(["git", *env, "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", *env, "commit", "-q", "-m", "init"], cwd=root, check=True)
        repo = open_repo(root)
        repo.new("plan", workflow="fanbench", description="bench")

        first: list[float] = []
        last: list[float] = [0.0]

        def agent(request: AgentRequest) -> ScriptedReply:
            if request.role == "planner":  # the task list, before the schedule starts
                return ScriptedReply(write={"{item_dir}/tasks.md": text})
            if not first:
                first.append(time.perf_counter())
            time.sleep(sleeps[request.labels["task"]])
            last[0] = max(last[0], time.perf_counter())
            return ScriptedReply(text="done")

        outcome = repo.run(
            "plan",
            backends={"default": ScriptedBackend(handler=agent)},
            options=RunOptions(jobs=jobs),
        )
        # From the first agent call's start to the last one's end: the schedule.
        elapsed = last[0] - first[0]
        assert outcome.status == "completed", outcome.message
        return (
            elapsed,
            bound(sleeps, deps, jobs),
            ideal(sleeps, deps, jobs),
            ideal(sleeps, deps, jobs, plan_order=True),
            size,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="50,200")
    parser.add_argument("--jobs", default="1,4,8")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print("Parallel foreach: makespan against max(critical path, total work / N)")
    print(
        f"{'tasks':>6} {'N':>3} {'makespan':>10} {'bound':>9} {'ratio':>7} "
        f"{'no-engine':>10} {'ratio':>7} {'plan order':>10} {'engine':>7}"
        f"   (goal: ratio to the bound <= {GOAL})"
    )
    worst = 0.0
    overhead: list[float] = []
    for size in sizes:
        for jobs in (int(j) for j in args.jobs.split(",")):
            makespan, low, free, listed, calls = run_once(size, jobs, "none", args.seed)
            worst = max(worst, makespan / low)
            overhead.append((makespan - free) / calls * 1000 * jobs)
            print(
                f"{size:>6} {jobs:>3} {makespan:>9.2f}s {low:>8.2f}s {makespan / low:>7.3f} "
                f"{free:>9.2f}s {free / low:>7.3f} {listed / low:>10.3f} {makespan / free:>7.3f}"
            )
    makespan, low, free, listed, _ = run_once(sizes[0], 4, "worktree", args.seed)
    print(
        f"{sizes[0]:>6} {4:>3} {makespan:>9.2f}s {low:>8.2f}s {makespan / low:>7.3f} "
        f"{free:>9.2f}s {free / low:>7.3f} {listed / low:>10.3f} {makespan / free:>7.3f}"
        "  (each item in its own git worktree, merged)"
    )
    print(
        "no-engine: the same schedule with zero cost per item, and its ratio to the bound "
        "(the bound itself is not always reachable: the scheduler does not know how long a "
        "task takes); plan order: that ratio had ready items started in plan order alone; "
        "engine: the makespan against the no-engine schedule; engine time per item and "
        "slot: " + ", ".join(f"{o:.1f} ms" for o in overhead)
    )
    print(f"worst ratio to the bound {worst:.3f}: goal {'met' if worst <= GOAL else 'missed'}")


if __name__ == "__main__":
    main()
