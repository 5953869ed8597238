"""Orchestration cost per agent call: phasegate against LangGraph and DBOS.

The same loop runs on each engine: ``phases`` phases, each an executor that
writes its artifact and a reviewer that approves on look ``approve_on``, so
``2 * phases * approve_on`` zero-latency agent calls per work item. Every
engine persists every step durably:

- phasegate, in two commit modes: ``every-step`` (a state commit after each
  step, what real agents get: ``PHASEGATE_COALESCE_SECONDS=0``) and
  ``coalesced`` (state commits grouped behind the fsync'd journal while
  agents answer in under 0.25 s, which only zero-latency agents do);
- LangGraph with its SqliteSaver in ``durability="sync"`` (a checkpoint
  written before the next step starts; WAL, ``synchronous=FULL``);
- DBOS on SQLite (each step's output recorded in its system database);
- ``floor``: no engine, only the file operations phasegate's every-step path
  makes per call (the agent's artifact, three journal lines and one fsync, the
  state file and the view's file replaced; once per phase, the finished
  phase appended to the state's archive and fsync'd): what no Python code
  around them can go below on this file system;
- ``floor-journal``: the agent's artifact and the fsync'd journal alone (no
  state file, no view): what any engine keeping a durable record of each step
  in a file writes at the least.

Each measurement runs in its own process (so peak memory is its own), after
a warm-up item that is not timed (imports, workflow loading, compiling the
graph). Used by ``bench/run.py``; ``python bench/loop.py --engine NAME`` runs
one measurement and prints it as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

ENGINES = ("phasegate", "phasegate-coalesced", "langgraph", "dbos", "floor", "floor-journal")


class LoopState(TypedDict):
    """The LangGraph loop's state (module level so its annotations resolve)."""

    phase: int
    iteration: int
    calls: int


def _git_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _workflow(phases: int, approve_on: int) -> str:
    text = (
        "name: bench\nitems_dir: work\nstate_file: state.json\ndefault_mode: standard\n"
        f"modes:\n  standard: {{max_iterations: {max(3, approve_on)}}}\n"
        "roles:\n  executor: {access: write}\n  reviewer: {access: read-only}\nphases:\n"
    )
    for n in range(1, phases + 1):
        text += (
            f"  - name: p{n}\n    artifact: p{n}.md\n    executor: executor\n"
            f"    executor_prompt: executor.md\n    reviewer: reviewer\n"
            f"    expectations: next phase needs p{n}\n"
        )
    return text


def bench_phasegate(workdir: Path, phases: int, approve_on: int, items: int) -> dict[str, Any]:
    from phasegate.agents.base import AgentRequest
    from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
    from phasegate.api import Repo
    from phasegate.config import Config

    repo_root = _git_repo(workdir / "repo")
    wf_dir = repo_root / ".phasegate" / "workflows"
    prompts = wf_dir / "prompts" / "bench"
    prompts.mkdir(parents=True)
    (prompts / "executor.md").write_text("Write {{ artifact_path }}.\n")
    (prompts / "reviewer.md").write_text("Review {{ phase }}.\n")
    (wf_dir / "bench.yaml").write_text(_workflow(phases, approve_on))

    def agent(request: AgentRequest) -> ScriptedReply:
        phase = request.labels["phase"]
        iteration = int(request.labels["iteration"])
        if request.role == "executor":
            return ScriptedReply(write={f"{{item_dir}}/{phase}.md": f"# {phase} v{iteration}\n"})
        approved = iteration >= approve_on
        issues = [] if approved else [{"severity": "blocker", "description": "again"}]
        return ScriptedReply(structured={"approved": approved, "issues": issues, "summary": "s"})

    repo = Repo(repo_root, Config())
    backend = ScriptedBackend(handler=agent)
    for i in range(items + 1):
        repo.new(f"item{i}", workflow="bench")
    warm = repo.run("item0", backends={"default": backend})  # imports, workflow loading
    assert warm.status == "completed", warm
    before = len(backend.requests)
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(1, items + 1):
        outcome = repo.run(f"item{i}", backends={"default": backend})
        assert outcome.status == "completed", outcome
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    calls = len(backend.requests) - before
    assert calls == items * 2 * phases * approve_on, calls
    state = repo_root / "work" / f"item{items}"
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "calls": calls,
        "state_bytes": (state / ".engine.json").stat().st_size,
    }


def bench_langgraph(workdir: Path, phases: int, approve_on: int, items: int) -> dict[str, Any]:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    out = workdir / "artifacts"
    out.mkdir()

    def executor(state: LoopState, config: RunnableConfig) -> dict[str, Any]:
        folder = out / config["configurable"]["thread_id"]  # each item its own, as phasegate's
        folder.mkdir(exist_ok=True)
        path = folder / f"p{state['phase']}.md"
        path.write_text(f"# p{state['phase']} v{state['iteration']}\n")
        return {"calls": state["calls"] + 1}

    def reviewer(state: LoopState) -> dict[str, Any]:
        if state["iteration"] >= approve_on:
            return {"phase": state["phase"] + 1, "iteration": 1, "calls": state["calls"] + 1}
        return {"iteration": state["iteration"] + 1, "calls": state["calls"] + 1}

    def route(state: LoopState) -> str:
        return END if state["phase"] > phases else "executor"

    graph = StateGraph(LoopState)
    graph.add_node("executor", executor)
    graph.add_node("reviewer", reviewer)
    graph.add_edge(START, "executor")
    graph.add_edge("executor", "reviewer")
    graph.add_conditional_edges("reviewer", route)
    conn = sqlite3.connect(str(workdir / "checkpoints.sqlite"), check_same_thread=False)
    app = graph.compile(checkpointer=SqliteSaver(conn))
    limit = 4 * phases * approve_on + 10

    def one(thread: str) -> int:
        final = app.invoke(
            {"phase": 1, "iteration": 1, "calls": 0},
            {"configurable": {"thread_id": thread}, "recursion_limit": limit},
            durability="sync",
        )
        return int(final["calls"])

    one("warm-up")
    started, cpu = time.perf_counter(), time.process_time()
    calls = sum(one(f"item{i}") for i in range(items))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert calls == items * 2 * phases * approve_on, calls
    pragmas = {
        "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
        "synchronous": conn.execute("PRAGMA synchronous").fetchone()[0],
    }
    return {"seconds": elapsed, "cpu_seconds": cpu, "calls": calls, "sqlite": pragmas}


def bench_dbos(workdir: Path, phases: int, approve_on: int, items: int) -> dict[str, Any]:
    import logging

    from dbos import DBOS

    logging.getLogger("dbos").setLevel(logging.WARNING)
    out = workdir / "artifacts"
    out.mkdir()
    database = workdir / "dbos.sqlite"
    DBOS(
        config={
            "name": "bench",
            "system_database_url": f"sqlite:///{database}",
            "run_admin_server": False,
        }
    )

    @DBOS.step()
    def executor(phase: int, iteration: int) -> None:
        (out / f"p{phase}.md").write_text(f"# p{phase} v{iteration}\n")

    @DBOS.step()
    def reviewer(phase: int, iteration: int) -> dict[str, Any]:
        approved = iteration >= approve_on
        issues = [] if approved else [{"severity": "blocker", "description": "again"}]
        return {"approved": approved, "issues": issues, "summary": "s"}

    @DBOS.workflow()
    def loop() -> int:
        calls = 0
        for phase in range(1, phases + 1):
            iteration = 1
            while True:
                executor(phase, iteration)
                verdict = reviewer(phase, iteration)
                calls += 2
                if verdict["approved"]:
                    break
                iteration += 1
        return calls

    DBOS.launch()
    try:
        loop()  # warm-up
        started, cpu = time.perf_counter(), time.process_time()
        calls = sum(loop() for _ in range(items))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        conn = sqlite3.connect(str(database))
        pragmas = {
            "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
            "synchronous": conn.execute("PRAGMA synchronous").fetchone()[0],
        }
        conn.close()
    finally:
        DBOS.destroy()
    assert calls == items * 2 * phases * approve_on, calls
    return {"seconds": elapsed, "cpu_seconds": cpu, "calls": calls, "sqlite": pragmas}


def bench_floor(
    workdir: Path, phases: int, approve_on: int, items: int, state_files: bool = True
) -> dict[str, Any]:
    """The every-step path's file operations alone, at the sizes the bench's items reach
    (without ``state_files``: the artifact and the journal alone)."""
    from phasegate.state.atomic import atomic_write_bytes

    line = b'{"ts": "2026-01-01T00:00:00Z", "event": "agent.finished", "x": "' + b"a" * 260
    line += b'"}\n'
    state, view = b"{" + b" " * 2800 + b"}\n", b"{" + b" " * 1950 + b"}\n"
    finished = b'{"node": "p1", "state": {' + b" " * 1500 + b"}}\n"

    def one(folder: Path) -> int:
        folder.mkdir()
        journal = os.open(folder / ".journal.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        calls = 0
        try:
            for phase in range(1, phases + 1):
                if phase > 1 and state_files:  # the phase before: archived, fsync'd
                    archive = os.open(
                        folder / ".engine-archive.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND
                    )
                    os.write(archive, finished)
                    os.fsync(archive)
                    os.close(archive)
                for iteration in range(1, approve_on + 1):
                    for role in ("executor", "reviewer"):
                        if role == "executor":
                            (folder / f"p{phase}.md").write_text(f"# p{phase} v{iteration}\n")
                        for _ in range(3):
                            os.write(journal, line)
                        os.fsync(journal)
                        if state_files:
                            atomic_write_bytes(folder / ".engine.json", state, durable=False)
                            atomic_write_bytes(folder / "state.json", view, durable=False)
                        calls += 1
        finally:
            os.close(journal)
        return calls

    one(workdir / "warm-up")
    started, cpu = time.perf_counter(), time.process_time()
    calls = sum(one(workdir / f"item{i}") for i in range(items))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"seconds": elapsed, "cpu_seconds": cpu, "calls": calls}


def run_child(engine: str, phases: int, approve_on: int, items: int) -> dict[str, Any]:
    """One measurement in this process (``engine`` as in :data:`ENGINES`)."""
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{engine}-"))
    try:
        if engine.startswith("phasegate"):
            result = bench_phasegate(workdir, phases, approve_on, items)
        elif engine == "langgraph":
            result = bench_langgraph(workdir, phases, approve_on, items)
        elif engine in ("floor", "floor-journal"):
            result = bench_floor(workdir, phases, approve_on, items, engine == "floor")
        else:
            result = bench_dbos(workdir, phases, approve_on, items)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result["engine"] = engine
    result["ms_per_call"] = 1000 * result["seconds"] / result["calls"]
    result["cpu_ms_per_call"] = 1000 * result["cpu_seconds"] / result["calls"]
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


class Missing(Exception):
    """The engine's package is not installed (the optional ``bench`` extra)."""


def measure(engine: str, phases: int = 5, approve_on: int = 3, items: int = 10) -> dict[str, Any]:
    """Run one measurement in a fresh process; :class:`Missing` if the engine is absent."""
    env = dict(os.environ)
    env.pop("PHASEGATE_COALESCE_SECONDS", None)
    if engine == "phasegate":
        env["PHASEGATE_COALESCE_SECONDS"] = "0"  # a state commit after every step
    argv = [sys.executable, __file__, "--engine", engine, "--phases", str(phases)]
    argv += ["--approve-on", str(approve_on), "--items", str(items)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        if "ModuleNotFoundError" in proc.stderr and engine in ("langgraph", "dbos"):
            raise Missing(engine)
        raise SystemExit(f"{engine} benchmark failed:\n{proc.stderr}")
    data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", choices=ENGINES, required=True)
    parser.add_argument("--phases", type=int, default=5)
    parser.add_argument("--approve-on", type=int, default=3)
    parser.add_argument("--items", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps(run_child(args.engine, args.phases, args.approve_on, args.items)))


if __name__ == "__main__":
    main()
