"""Benchmark (``make bench``): latency of ``phasegate hook session-start``.

Claude Code starts the hook as a new process at the start of every session,
so what counts is a cold process: interpreter start-up, imports, reading the
work items. The repository has 50 work items (some completed, some part-way
through, a few in worktrees). Each command runs ``--runs`` times; the median
is compared with a bare ``python -c pass`` measured in the same run. The goal
is a hook under 100 ms. The first call after the workflows change rebuilds
the cached layout and is shown separately.
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

ITEMS = 50
GOAL_MS = 100.0


def _build_repo(root: Path) -> None:
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
            "executor": {"*": [{"write": {"{item_dir}/{phase}.md": "# doc\n"}}]},
            "*": {"*": [approve]},
        }
    )
    loaded = repo.registry.get("feature")
    for i in range(ITEMS):
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


def _median(argv: list[str], cwd: Path, stdin: str, runs: int) -> tuple[float, float]:
    samples = [_time(argv, cwd, stdin) for _ in range(runs)]
    return statistics.median(samples), max(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    script = Path(sys.executable).parent / "phasegate"
    if not script.exists():
        raise SystemExit(f"{script} not found: install phasegate in this environment first")
    workdir = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    try:
        root = workdir / "repo"
        _build_repo(root)
        payload = json.dumps({"session_id": "bench", "cwd": str(root), "source": "startup"})
        hook = [str(script), "hook", "session-start"]
        first = _time(hook, root, payload)  # builds .phasegate/cache/hook-layout.json
        output = subprocess.run(hook, cwd=root, input=payload, capture_output=True, text=True)
        context = json.loads(output.stdout)["hookSpecificOutput"]["additionalContext"]
        bare, bare_max = _median([sys.executable, "-c", "pass"], root, "", args.runs)
        warm, warm_max = _median(hook, root, payload, args.runs)
        status, _ = _median([str(script), "status", "--json"], root, "", max(3, args.runs // 5))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"Hook latency: cold process, {ITEMS} work items, median of {args.runs} runs "
        f"({context.split(' active', 1)[0].removeprefix('phasegate: ')} active; context "
        f"{len(context)} characters)."
    )
    print(f"python -c pass              : {bare:6.1f} ms (max {bare_max:.1f})")
    print(f"phasegate hook session-start: {warm:6.1f} ms (max {warm_max:.1f})")
    print(f"  first call (builds layout): {first:6.1f} ms")
    print(f"  hook minus bare python    : {warm - bare:6.1f} ms")
    print(f"phasegate status --json     : {status:6.1f} ms (the full CLI, for comparison)")
    verdict = "met" if warm < GOAL_MS else "MISSED"
    print(f"goal < {GOAL_MS:.0f} ms: {verdict}")


if __name__ == "__main__":
    main()
