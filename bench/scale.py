"""Benchmark (``make bench``): what grows with the repository and with an item's history.

- ``phasegate status``, ``status --json`` and the SessionStart hook in a
  repository with 1000 work items, against the same with 10 (a new process
  per run, medians). Goals: the hook under 100 ms with a bounded context,
  ``status`` under 1 s.
- Resuming an item (reading its state and journal tail, what ``phasegate run``
  does first) whose journal has 100,000 lines, against one with 100 (time
  and peak memory of a new process). Goal: the same cost.

Figures from one run on this machine: the ratios show the growth.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from startup import build_repo

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


def _once(argv: list[str], cwd: Path, stdin: str = "") -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, check=True)
    return (time.perf_counter() - started) * 1000


def _median(argv: list[str], cwd: Path, runs: int, stdin: str = "") -> float:
    _once(argv, cwd, stdin)  # the first call may build caches
    return statistics.median(_once(argv, cwd, stdin) for _ in range(runs))


def repo_figures(root: Path, runs: int) -> dict[str, Any]:
    """Status, status --json and the hook in the repository at ``root``."""
    script = str(Path(sys.executable).parent / "phasegate")
    payload = json.dumps({"session_id": "bench", "cwd": str(root), "source": "startup"})
    hook = [script, "hook", "session-start"]
    output = subprocess.run(hook, cwd=root, input=payload, capture_output=True, text=True)
    context = json.loads(output.stdout)["hookSpecificOutput"]["additionalContext"]
    return {
        "status": _median([script, "status"], root, runs),
        "status --json": _median([script, "status", "--json"], root, runs),
        "hook": _median(hook, root, runs, payload),
        "context": len(context),
    }


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
    workdir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        small, large = workdir / "small", workdir / "large"
        build_repo(small, 10)
        build_repo(large, args.items)
        few = repo_figures(small, args.runs)
        many = repo_figures(large, args.runs)
        from phasegate.api import Repo

        resumes = {}
        for lines in (100, 100_000):
            root = workdir / f"journal{lines}"
            build_repo(root, 0)
            Repo(root).new("grown", description="an item with a long history")
            resumes[lines] = resume_figures(root, lines)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"Scale: 10 against {args.items} work items (a new process per run, median).")
    for key in ("status", "status --json", "hook"):
        print(
            f"{key:14}: {few[key]:7.1f} ms with 10, {many[key]:7.1f} ms with {args.items} "
            f"({many[key] / few[key]:.2f}x)"
        )
    print(
        f"hook context  : {few['context']} characters with 10, {many['context']} with {args.items}"
    )
    hook = "met" if many["hook"] < HOOK_GOAL_MS else "MISSED"
    status = "met" if many["status"] < STATUS_GOAL_MS else "MISSED"
    print(f"goal hook < {HOOK_GOAL_MS:.0f} ms at {args.items} items: {hook}")
    print(f"goal status < {STATUS_GOAL_MS:.0f} ms at {args.items} items: {status}")
    a, b = resumes[100], resumes[100_000]
    print(
        f"resume (load state + journal tail): {a['load_ms']:.1f} ms / {a['rss_mb']:.0f} MB peak "
        f"with a 100-line journal, {b['load_ms']:.1f} ms / {b['rss_mb']:.0f} MB with 100,000 "
        f"({b['load_ms'] / a['load_ms']:.2f}x time, {b['rss_mb'] / a['rss_mb']:.2f}x memory)"
    )


if __name__ == "__main__":
    main()
