"""typer builds a pydantic adapter for each command parameter; phasegate defers it to the
first value that needs one. What a command receives, and every error message, must be what
typer gives without the deferral."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

APP = """
import json, sys
from pathlib import Path
from typing import Annotated
import typer
if sys.argv[1] == "deferred":
    from phasegate.cli.lazy_params import defer_coercion
    defer_coercion()
app = typer.Typer()
@app.callback()
def top(color: Annotated[str, typer.Option("--color")] = "auto") -> None:
    pass
@app.command()
def cmd(
    name: Annotated[str | None, typer.Argument()] = None,
    flag: Annotated[bool, typer.Option("--flag")] = False,
    repo: Annotated[Path | None, typer.Option("--repo", "-C")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, max=64)] = None,
    answer: Annotated[list[str] | None, typer.Option("--answer")] = None,
    ratio: Annotated[float, typer.Option("--ratio")] = 0.5,
) -> None:
    got = {"name": name, "flag": flag, "repo": repo, "jobs": jobs, "answer": answer,
           "ratio": ratio}
    print(json.dumps({k: [type(v).__name__, str(v)] for k, v in got.items()}))
try:
    typer.main.get_command(app).main(args=sys.argv[2:], standalone_mode=False)
except Exception as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
"""

CASES = [
    ["cmd"],
    ["--color", "never", "cmd", "item", "--flag"],
    ["cmd", "-C", "some/dir", "--jobs", "4", "--answer", "a=b", "--answer", "c=d"],
    ["cmd", "--jobs", "0"],
    ["cmd", "--jobs", "many"],
    ["cmd", "--ratio", "nope"],
    ["cmd", "--ratio", "2"],
    ["cmd", "--repo", ""],
    ["cmd", "héllo wörld"],
]


def _run(mode: str, args: list[str], cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", APP, mode, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
def test_deferred_coercion_gives_what_typer_gives(args: list[str], tmp_path: Path) -> None:
    """Values (their types included) and usage errors are the same with and without it."""
    deferred = _run("deferred", args, tmp_path)
    assert deferred == _run("typer", args, tmp_path)
    assert json.loads(deferred)
