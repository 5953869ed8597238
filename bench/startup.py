"""Benchmark (``make bench``): how long a ``phasegate`` command takes to start.

Every command is a new process, so what a user waits for first is the
interpreter, the imports and reading the repository. Measured cold (a new
process per run, medians of ``--runs`` runs, alternating between the
commands so that load on a shared machine weighs on all alike; wall-clock
time, and the CPU time of the process, which load on the machine hardly
changes):

- ``python -c pass`` and ``python -c "import typer, rich, pydantic"`` (the
  anchor: the libraries the CLI is built on);
- ``phasegate --help``;
- ``phasegate status``, ``phasegate status --json`` and ``phasegate status
  NAME`` in a repository with 10 work items (``bench/scale.py`` has them with
  1000);
- ``phasegate run NAME --until P`` of a phase ``P`` the item has completed:
  the whole start of a run (config, workflow, item, state, lock) up to where
  it would dispatch its first agent, without an agent.

phasegate's own modules are compiled to bytecode first, as installing a
package does (a checkout run with ``PYTHONDONTWRITEBYTECODE`` would otherwise
compile them at every start, while the libraries come compiled). The first
call of each command, which fills phasegate's caches, is not counted.

The goal is ``--help`` and each ``status`` within 1.5x the anchor.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.5
ITEMS = 10
#: The phase of ``item-0000`` completed before measuring ``run NAME --until`` it.
DONE_PHASE = "brainstorm"


def compile_package() -> None:
    """Compile phasegate's sources to bytecode (what ``pip install`` does)."""
    import phasegate

    compileall.compile_dir(str(Path(phasegate.__file__).parent), quiet=1)


def build_repo(root: Path, items: int, *, run_first: bool = False) -> None:
    """A git repository with ``items`` feature work items, made through the engine
    (``run_first``: the first one run through its first phase)."""
    from phasegate.agents.scripted import ScriptedBackend
    from phasegate.api import Repo
    from phasegate.engine.items import create_item
    from phasegate.engine.runner import RunOptions

    root.mkdir(parents=True)
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    env |= {"PATH": "/usr/bin:/bin"}
    (root / "README.md").write_text("bench\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    repo = Repo(root)
    loaded = repo.registry.get("feature")
    for i in range(items):
        create_item(root, f"item-{i:04d}", loaded, repo.config, mode=None, description=f"Item {i}")
    if not run_first:
        return
    done = {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}
    approve = {"verdict": {"approved": True, "issues": [], "summary": "ok"}}
    script = {"executor": {"brainstorm": [done]}, "*": {"*": [approve]}}
    options = RunOptions(until=DONE_PHASE, yes=True)
    repo.run("item-0000", backends={"default": ScriptedBackend(script=script)}, options=options)


def timed(argv: list[str], cwd: Path, stdin: str = "") -> tuple[float, float]:
    """Wall-clock and CPU milliseconds of one run of ``argv`` (a new process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, check=True)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu


def measure(commands: dict[str, list[str]], cwd: Path, runs: int) -> dict[str, tuple[float, float]]:
    """Median wall-clock and CPU milliseconds of each command, rounds alternating."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for argv in commands.values():
        timed(argv, cwd)  # warm the page cache and phasegate's caches
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(timed(argv, cwd))
    return {
        name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got))
        for name, got in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    compile_package()
    script = Path(sys.executable).parent / "phasegate"
    workdir = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    os.environ["XDG_CACHE_HOME"] = str(workdir / "user-cache")  # the user's own stays as it is
    try:
        root = workdir / "repo"
        build_repo(root, ITEMS, run_first=True)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "import typer, rich, pydantic": [
                sys.executable,
                "-c",
                "import typer, rich, pydantic",
            ],
            "phasegate --help": [str(script), "--help"],
            f"phasegate status ({ITEMS} items)": [str(script), "status"],
            f"phasegate status --json ({ITEMS} items)": [str(script), "status", "--json"],
            "phasegate status NAME": [str(script), "status", "item-0000"],
            "phasegate run NAME --until (done)": [
                str(script),
                "run",
                "item-0000",
                "--until",
                DONE_PHASE,
            ],
        }
        found = measure(commands, root, args.runs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    anchor, anchor_cpu = found["import typer, rich, pydantic"]
    print(f"Start-up: a new process per run, median of {args.runs} alternating runs.")
    for name, (ms, cpu) in found.items():
        print(
            f"{name:34}: {ms:7.1f} ms ({ms / anchor:4.2f}x the anchor); "
            f"CPU {cpu:6.1f} ms ({cpu / anchor_cpu:4.2f}x)"
        )
    goals = ("phasegate --help", *(name for name in found if name.startswith("phasegate status")))
    for name in goals:
        ratio = found[name][0] / anchor
        verdict = "met" if ratio <= GOAL else "MISSED"
        print(f"goal {name} <= {GOAL}x import typer, rich, pydantic: {ratio:.2f}x {verdict}")


if __name__ == "__main__":
    main()
