"""Benchmark (``make bench``): what grows with the repository and with an item's history.

- ``phasegate status``, ``status --json``, ``status NAME`` and the
  SessionStart hook in a repository with 1000 work items, against the same
  with 10 (a new process per run, medians of rounds alternating between the
  two repositories; wall-clock and CPU time). Goals: the hook under 100 ms
  with a bounded context, ``status`` and ``status --json`` under 1 s.
- The first ``status`` and hook after phasegate's caches were deleted (what
  the first command after a change of the workflows or the config pays: the
  workflows are loaded and the layout rebuilt), at 10 and at 1000 items.
- Resuming an item (reading its state and journal tail, what ``phasegate run``
  does first) whose journal has 100,000 lines, against one with 100 (time
  and peak memory of a new process). Goal: the same cost.

Figures from one run on this machine: the ratios show the growth.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from startup import build_repo, compile_package, timed

HOOK_GOAL_MS = 100.0
STATUS_GOAL_MS = 1000.0

# Peak memory from VmHWM: ru_maxrss would count the parent's size at fork.
_RESUME = """
import json, sys, time
from pathlib import Path
started = time.perf_counter()
from phasegate.api import Repo
imported = time.perf_counter()
state = Repo(Path(sys.argv[1])).item("grown").load()
done = time.perf_counter()
status = Path("/proc/self/status").read_text()
peak = int(status.split("VmHWM:", 1)[1].split()[0]) / 1024
print(json.dumps({"load_ms": (done - imported) * 1000, "total_ms": (done - started) * 1000,
                  "rss_mb": peak, "lines": state.journal_lines}))
"""


def _commands(root: Path) -> dict[str, tuple[list[str], str]]:
    script = str(Path(sys.executable).parent / "phasegate")
    payload = json.dumps({"session_id": "bench", "cwd": str(root), "source": "startup"})
    return {
        "status": ([script, "status"], ""),
        "status --json": ([script, "status", "--json"], ""),
        "status NAME": ([script, "status", "item-0000"], ""),
        "hook": ([script, "hook", "session-start"], payload),
    }


def _context(root: Path) -> str:
    argv, payload = _commands(root)["hook"]
    output = subprocess.run(argv, cwd=root, input=payload, capture_output=True, text=True)
    return str(json.loads(output.stdout)["hookSpecificOutput"]["additionalContext"])


def _cold(root: Path, runs: int) -> dict[str, tuple[float, float]]:
    """The first status and hook after the rebuilt caches were deleted (medians)."""
    found: dict[str, list[tuple[float, float]]] = {"status (first)": [], "hook (first)": []}
    commands = _commands(root)
    for _ in range(runs):
        for name, command in (("status (first)", "status"), ("hook (first)", "hook")):
            # The caches phasegate rebuilds by itself (the item index, kept by commits,
            # stays): the workflow layout and the validated workflows.
            (root / ".phasegate" / "cache" / "hook-layout.json").unlink(missing_ok=True)
            shutil.rmtree(Path(os.environ["XDG_CACHE_HOME"]) / "phasegate", ignore_errors=True)
            argv, stdin = commands[command]
            found[name].append(timed(argv, root, stdin))
    return {name: _medians(got) for name, got in found.items()}


def _medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def repo_figures(roots: dict[str, Path], runs: int) -> dict[str, dict[str, Any]]:
    """Each command in each repository, rounds alternating between them all."""
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for label, root in roots.items():
        for name, (argv, stdin) in _commands(root).items():
            timed(argv, root, stdin)  # the first call may build caches
            samples[(label, name)] = []
    for _ in range(runs):
        for label, root in roots.items():
            for name, (argv, stdin) in _commands(root).items():
                samples[(label, name)].append(timed(argv, root, stdin))
    figures: dict[str, dict[str, Any]] = {}
    for label, root in roots.items():
        figures[label] = {name: _medians(samples[(label, name)]) for name in _commands(root)}
        figures[label]["context"] = len(_context(root))
        figures[label] |= _cold(root, max(3, runs // 2))
    return figures


def grow_journal(root: Path, lines: int) -> None:
    """Give item ``grown`` a journal of ``lines`` lines (pairs of dispatch and result events,
    as agent calls write them) and commit its state after them."""
    from phasegate.api import Repo

    item = Repo(root).item("grown")
    state = item.load()
    with item.journal.path.open("ab") as journal:
        for n in range(lines // 2):
            for event in (
                {"event": "agent.dispatched", "key": f"k{n}", "role": "executor", "tries": 1},
                {"event": "agent.finished", "key": f"k{n}", "ok": True, "text": "done " * 20},
            ):
                journal.write((json.dumps({"ts": "2026-01-01T00:00:00Z", **event}) + "\n").encode())
    item.save(state, durable=True)


def resume_figures(root: Path, lines: int) -> dict[str, Any]:
    grow_journal(root, lines)
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _RESUME, str(root)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(5)
    ]
    runs.sort(key=lambda r: r["load_ms"])
    return dict(runs[len(runs) // 2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--items", type=int, default=1000)
    args = parser.parse_args()
    compile_package()
    workdir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    os.environ["XDG_CACHE_HOME"] = str(workdir / "user-cache")  # the user's own stays as it is
    try:
        small, large = workdir / "small", workdir / "large"
        build_repo(small, 10)
        build_repo(large, args.items)
        figures = repo_figures({"few": small, "many": large}, args.runs)
        from phasegate.api import Repo

        resumes = {}
        for lines in (100, 100_000):
            root = workdir / f"journal{lines}"
            build_repo(root, 0)
            Repo(root).new("grown", description="an item with a long history")
            resumes[lines] = resume_figures(root, lines)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    few, many = figures["few"], figures["many"]
    print(
        f"Scale: 10 against {args.items} work items (a new process per run, median; "
        "wall-clock, then CPU time)."
    )
    keys = ("status", "status --json", "status NAME", "hook", "status (first)", "hook (first)")
    for key in keys:
        (a, a_cpu), (b, b_cpu) = few[key], many[key]
        print(
            f"{key:15}: {a:7.1f} ms with 10, {b:7.1f} ms with {args.items} ({b / a:.2f}x); "
            f"CPU {a_cpu:6.1f} ms, {b_cpu:6.1f} ms ({b_cpu / a_cpu:.2f}x)"
        )
    print(
        f"hook context   : {few['context']} characters with 10, {many['context']} with "
        f"{args.items} ({many['context'] / few['context']:.2f}x)"
    )
    goals = (
        ("hook", HOOK_GOAL_MS),
        ("status", STATUS_GOAL_MS),
        ("status --json", STATUS_GOAL_MS),
    )
    for key, goal in goals:
        verdict = "met" if many[key][0] < goal else "MISSED"
        print(f"goal {key} < {goal:.0f} ms at {args.items} items: {many[key][0]:.1f} ms {verdict}")
    a, b = resumes[100], resumes[100_000]
    print(
        f"resume (load state + journal tail): {a['load_ms']:.1f} ms / {a['rss_mb']:.0f} MB peak "
        f"with a 100-line journal, {b['load_ms']:.1f} ms / {b['rss_mb']:.0f} MB with 100,000 "
        f"({b['load_ms'] / a['load_ms']:.2f}x time, {b['rss_mb'] / a['rss_mb']:.2f}x memory)"
    )


if __name__ == "__main__":
    main()
