"""Benchmark (``make bench``): how long a ``phasegate`` command takes to start.

Every command is a new process, so what a user waits for first is the
interpreter, the imports and reading the repository. Measured cold (a new
process per run, medians of ``--runs`` runs, alternating between the
commands so that load on a shared machine weighs on all alike):

- ``python -c pass`` and ``python -c "import typer, rich, pydantic"`` (the
  anchor: the libraries the CLI is built on);
- ``phasegate --help``;
- ``phasegate status`` and ``phasegate status --json`` in a repository with
  10 work items.

The goal is ``--help`` and ``status`` within 1.5x the anchor.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.5
ITEMS = 10


def build_repo(root: Path, items: int) -> None:
    """A git repository with ``items`` feature work items, made through the engine."""
    from phasegate.api import Repo
    from phasegate.engine.items import create_item

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


def _once(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


def measure(commands: dict[str, list[str]], cwd: Path, runs: int) -> dict[str, float]:
    """Median milliseconds of each command, rounds alternating between them."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():
        _once(argv, cwd)  # warm the page cache
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(_once(argv, cwd))
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    script = Path(sys.executable).parent / "phasegate"
    workdir = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        root = workdir / "repo"
        build_repo(root, ITEMS)
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
        }
        found = measure(commands, root, args.runs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    anchor = found["import typer, rich, pydantic"]
    print(f"Start-up: a new process per run, median of {args.runs} alternating runs.")
    for name, ms in found.items():
        print(f"{name:34}: {ms:7.1f} ms  ({ms / anchor:4.2f}x the anchor)")
    for name in ("phasegate --help", f"phasegate status ({ITEMS} items)"):
        ratio = found[name] / anchor
        verdict = "met" if ratio <= GOAL else "MISSED"
        print(f"goal {name} <= {GOAL}x import typer, rich, pydantic: {ratio:.2f}x {verdict}")


if __name__ == "__main__":
    main()
