"""Benchmark (``make bench``): latency of ``phasegate hook session-start``.

Claude Code starts the hook as a new process at the start of every session,
so what counts is a cold process: interpreter start-up, imports, reading the
work items. The repositories have 10 and 50 work items (some completed, some
part-way through, a few in worktrees). Each command runs ``--runs`` times,
alternating between the two; the medians are compared with a bare ``python
-c pass`` measured in the same run. The goal is a hook under 100 ms. The
first call after the workflows change rebuilds the cached layout and is
shown separately. (``bench/scale.py`` has the hook with 1000 items.)
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

from startup import compile_package

SIZES = (10, 50)
GOAL_MS = 100.0


def _build_repo(root: Path, items: int) -> None:
    from phasegate.agents.scripted import ScriptedBackend
    from phasegate.api import Repo
    from phasegate.engine.items import create_item
    from phasegate.engine.runner import RunOptions

    root.mkdir(parents=True)
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    (root / "README.md").write_text("bench\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env | _path_env())
    repo = Repo(root)
    approve = {"verdict": {"approved": True, "issues": [], "summary": "ok"}}
    backend = ScriptedBackend(
        script={
            "executor": {
                "specify": [{"write": {"{item_dir}/spec.md": "# doc\n"}}],  # design reads it
                "*": [{"write": {"{item_dir}/{phase}.md": "# doc\n"}}],
            },
            "*": {"*": [approve]},
        }
    )
    loaded = repo.registry.get("feature")
    for i in range(items):
        name = f"item-{i:02d}"
        create_item(
            root, name, loaded, repo.config, mode=None, description=f"Item {i}", worktree=i < 5
        )
        if i % 5 == 1:  # part-way through the workflow
            repo.run(
                name, backends={"default": backend}, options=RunOptions(until="design", yes=True)
            )
        elif i % 5 == 2:  # completed
            repo.run(
                name, backends={"default": backend}, options=RunOptions(phase="finish", yes=True)
            )


def _path_env() -> dict[str, str]:
    import os

    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def _time(argv: list[str], cwd: Path, stdin: str) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, check=True)
    return (time.perf_counter() - started) * 1000


def _median(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), max(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    compile_package()
    script = Path(sys.executable).parent / "phasegate"
    if not script.exists():
        raise SystemExit(f"{script} not found: install phasegate in this environment first")
    hook = [str(script), "hook", "session-start"]
    workdir = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    first: dict[int, float] = {}
    contexts: dict[int, str] = {}
    payloads: dict[int, str] = {}
    roots: dict[int, Path] = {}
    try:
        for size in SIZES:
            root = roots[size] = workdir / f"repo{size}"
            _build_repo(root, size)
            payloads[size] = json.dumps({"session_id": "b", "cwd": str(root), "source": "startup"})
            first[size] = _time(hook, root, payloads[size])  # builds the cached layout
            output = subprocess.run(
                hook, cwd=root, input=payloads[size], capture_output=True, text=True
            )
            contexts[size] = json.loads(output.stdout)["hookSpecificOutput"]["additionalContext"]
        samples: dict[str, list[float]] = {"bare": [], **{f"hook{n}": [] for n in SIZES}}
        for _ in range(args.runs):  # rounds alternate: load on the machine weighs on all alike
            samples["bare"].append(_time([sys.executable, "-c", "pass"], workdir, ""))
            for size in SIZES:
                samples[f"hook{size}"].append(_time(hook, roots[size], payloads[size]))
        status = {
            size: statistics.median(
                _time([str(script), "status", "--json"], roots[size], "")
                for _ in range(max(3, args.runs // 5))
            )
            for size in SIZES
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    bare, bare_max = _median(samples["bare"])
    print(f"Hook latency: cold process, median of {args.runs} alternating runs.")
    print(f"python -c pass                  : {bare:6.1f} ms (max {bare_max:.1f})")
    for size in SIZES:
        warm, warm_max = _median(samples[f"hook{size}"])
        active = contexts[size].split(" active", 1)[0].removeprefix("phasegate: ")
        print(
            f"hook session-start, {size:2} items   : {warm:6.1f} ms (max {warm_max:.1f}; "
            f"{active} active, context {len(contexts[size])} characters)"
        )
        print(f"  first call (builds layout)    : {first[size]:6.1f} ms")
        print(f"  hook minus bare python        : {warm - bare:6.1f} ms")
        print(f"  phasegate status --json       : {status[size]:6.1f} ms (the full CLI)")
    small, large = (_median(samples[f"hook{n}"])[0] for n in SIZES)
    print(f"hook with {SIZES[1]} items against {SIZES[0]}: {large / small:.2f}x")
    warm = _median(samples[f"hook{SIZES[-1]}"])[0]
    verdict = "met" if warm < GOAL_MS else "MISSED"
    print(f"goal < {GOAL_MS:.0f} ms with {SIZES[-1]} items: {verdict}")


if __name__ == "__main__":
    main()
