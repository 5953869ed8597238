"""Benchmarks (``make bench``): orchestration overhead per agent call.

The same loop runs on phasegate and, when the optional ``bench`` extra is
installed, on LangGraph with its SqliteSaver checkpointer: 5 phases, each an
executor that writes its artifact and a reviewer that approves on the third
look, so 30 zero-latency agent calls per work item. Both persist every step
durably (phasegate: fsync'd atomic state + journal; LangGraph: a SQLite
checkpoint per step). Each engine runs in its own process so peak memory is
its own. Figures from one run on this machine: compare the ratio, not the
absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

PHASES = 5
APPROVE_ON = 3
ITEMS = 10
CALLS_PER_ITEM = PHASES * APPROVE_ON * 2
ROUNDS = 5

WORKFLOW = """\
name: bench5
items_dir: work
state_file: state.json
default_mode: standard
modes:
  standard: {max_iterations: 3}
roles:
  executor: {access: write}
  reviewer: {access: read-only}
phases:
"""


class LoopState(TypedDict):
    """The LangGraph loop's state (module level so its annotations resolve)."""

    phase: int
    iteration: int
    approved: bool
    calls: int


def _git_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def bench_phasegate(workdir: Path) -> dict[str, Any]:
    from phasegate.agents.base import AgentRequest
    from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
    from phasegate.api import Repo
    from phasegate.config import Config

    repo_root = _git_repo(workdir / "repo")
    wf_dir = repo_root / ".phasegate" / "workflows"
    prompts = wf_dir / "prompts" / "bench5"
    prompts.mkdir(parents=True)
    text = WORKFLOW
    for n in range(1, PHASES + 1):
        text += (
            f"  - name: p{n}\n    artifact: p{n}.md\n    executor: executor\n"
            f"    reviewer: reviewer\n    expectations: next phase needs p{n}\n"
        )
        (prompts / f"p{n}.md").write_text("Write {{ artifact_path }}.\n")
    (prompts / "reviewer.md").write_text("Review {{ phase }}.\n")
    (wf_dir / "bench5.yaml").write_text(text)

    def agent(request: AgentRequest) -> ScriptedReply:
        phase = request.labels["phase"]
        iteration = int(request.labels["iteration"])
        if request.role == "executor":
            return ScriptedReply(write={f"{{item_dir}}/{phase}.md": f"# {phase} v{iteration}\n"})
        approved = iteration >= APPROVE_ON
        issues = [] if approved else [{"severity": "blocker", "description": "again"}]
        return ScriptedReply(structured={"approved": approved, "issues": issues, "summary": "s"})

    repo = Repo(repo_root, Config())
    backend = ScriptedBackend(handler=agent)
    for i in range(ITEMS):
        repo.new(f"item{i}", workflow="bench5")
    started = time.perf_counter()
    for i in range(ITEMS):
        outcome = repo.run(f"item{i}", backends={"default": backend})
        assert outcome.status == "completed", outcome
    elapsed = time.perf_counter() - started
    assert len(backend.requests) == ITEMS * CALLS_PER_ITEM, len(backend.requests)
    return {"engine": "phasegate", "seconds": elapsed, "calls": len(backend.requests)}


def bench_langgraph(workdir: Path) -> dict[str, Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    out = workdir / "artifacts"
    out.mkdir()

    def executor(state: LoopState) -> dict[str, Any]:
        path = out / f"p{state['phase']}.md"
        path.write_text(f"# p{state['phase']} v{state['iteration']}\n")
        return {"calls": state["calls"] + 1}

    def reviewer(state: LoopState) -> dict[str, Any]:
        approved = state["iteration"] >= APPROVE_ON
        if approved:
            return {
                "approved": False,
                "phase": state["phase"] + 1,
                "iteration": 1,
                "calls": state["calls"] + 1,
            }
        return {"approved": False, "iteration": state["iteration"] + 1, "calls": state["calls"] + 1}

    def route(state: LoopState) -> str:
        return END if state["phase"] > PHASES else "executor"

    graph = StateGraph(LoopState)
    graph.add_node("executor", executor)
    graph.add_node("reviewer", reviewer)
    graph.add_edge(START, "executor")
    graph.add_edge("executor", "reviewer")
    graph.add_conditional_edges("reviewer", route)
    conn = sqlite3.connect(str(workdir / "checkpoints.sqlite"), check_same_thread=False)
    saver = SqliteSaver(conn)
    app = graph.compile(checkpointer=saver)
    calls = 0
    started = time.perf_counter()
    for i in range(ITEMS):
        final = app.invoke(
            {"phase": 1, "iteration": 1, "approved": False, "calls": 0},
            {"configurable": {"thread_id": f"item{i}"}, "recursion_limit": 200},
        )
        calls += final["calls"]
    elapsed = time.perf_counter() - started
    pragmas = {
        "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
        "synchronous": conn.execute("PRAGMA synchronous").fetchone()[0],
    }
    assert calls == ITEMS * CALLS_PER_ITEM, calls
    return {"engine": "langgraph", "seconds": elapsed, "calls": calls, "sqlite": pragmas}


def _child(engine: str) -> None:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{engine}-"))
    try:
        result = bench_phasegate(workdir) if engine == "phasegate" else bench_langgraph(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _measure(engine: str) -> dict[str, Any] | None:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", engine], capture_output=True, text=True
    )
    if proc.returncode != 0:
        if engine == "langgraph" and "ModuleNotFoundError" in proc.stderr:
            return None
        raise SystemExit(f"{engine} benchmark failed:\n{proc.stderr}")
    data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    data["ms_per_call"] = 1000 * data["seconds"] / data["calls"]
    return data


def _median(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted(rounds, key=lambda d: d["ms_per_call"])
    median = dict(ordered[len(ordered) // 2])
    median["rounds"] = [round(d["ms_per_call"], 3) for d in rounds]
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", choices=["phasegate", "langgraph"])
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    print(
        f"Loop: {PHASES} phases x approve on look {APPROVE_ON} = {CALLS_PER_ITEM} agent calls "
        f"per item, {ITEMS} items, zero-latency agents, durable state; median of {ROUNDS} rounds."
    )
    # Rounds alternate between the engines so that load on a shared machine
    # weighs on both alike; each engine's median round is reported.
    ours_rounds: list[dict[str, Any]] = []
    theirs_rounds: list[dict[str, Any]] = []
    for _ in range(ROUNDS):
        mine = _measure("phasegate")
        assert mine is not None
        ours_rounds.append(mine)
        other = _measure("langgraph")
        if other is not None:
            theirs_rounds.append(other)
    ours = _median(ours_rounds)
    print(
        f"phasegate : {ours['ms_per_call']:.3f} ms per agent call "
        f"(rounds {ours['rounds']}), peak RSS {ours['peak_rss_mb']:.0f} MB"
    )
    if not theirs_rounds:
        print("langgraph : not installed (pip install -e '.[bench]'); skipped")
        return
    theirs = _median(theirs_rounds)
    print(
        f"langgraph : {theirs['ms_per_call']:.3f} ms per agent call "
        f"(rounds {theirs['rounds']}), peak RSS {theirs['peak_rss_mb']:.0f} MB, "
        f"sqlite {theirs['sqlite']}"
    )
    time_ratio = ours["ms_per_call"] / theirs["ms_per_call"]
    rss_ratio = ours["peak_rss_mb"] / theirs["peak_rss_mb"]
    print(f"ratio phasegate/langgraph: time per call {time_ratio:.2f}, peak RSS {rss_ratio:.2f}")


if __name__ == "__main__":
    main()
