"""A closed pipe (``phasegate run 2>&1 | head``, ``phasegate status | head``): the command
exits 141 (128 + SIGPIPE) as command-line tools do, and a run stopped so resumes cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

ITEM = Path("docs/features/x")
SIGPIPE_EXIT = 141


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def into_a_closed_pipe(repo: Path, *args: str, stream: str) -> int:
    """Run phasegate with ``stream`` (stdout or stderr) a pipe nobody reads any more."""
    read, write = os.pipe()
    os.close(read)  # the reader went away before the first line
    try:
        where = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: write}
        proc = subprocess.run(
            [sys.executable, "-m", "phasegate", *args],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=where["stdout"],
            stderr=where["stderr"],
            timeout=120,
        )
    finally:
        os.close(write)
    return proc.returncode


def make_repo(root: Path) -> Path:
    repo = init_repo(root)
    (repo / ".phasegate").mkdir()
    (repo / ".phasegate" / "config.yaml").write_text("roles:\n  default: {backend: auto}\n")
    assert phasegate(repo, "new", "x", "--mode", "quick", "--description", "do x").returncode == 0
    return repo


def journal(repo: Path) -> list[dict[str, Any]]:
    lines = (repo / ITEM / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_run_whose_progress_pipe_is_closed_exits_141_and_resumes(tmp_path: Path) -> None:
    """A closed pipe: `phasegate run 2>&1 | head` stops the run with exit 141 (not 1), and the
    next run resumes it to the end, calling no agent whose result was recorded again."""
    repo = make_repo(tmp_path / "repo")
    assert into_a_closed_pipe(repo, "run", "x", stream="stderr") == SIGPIPE_EXIT
    stopped = journal(repo)
    assert not [e for e in stopped if e["event"] == "item.completed"]
    again = phasegate(repo, "run", "x")
    assert again.returncode == 0, again.stderr
    events = journal(repo)
    finished = [e["key"] for e in events if e["event"] == "agent.finished" and e["ok"]]
    assert len(finished) == len(set(finished))
    status = json.loads(phasegate(repo, "status", "x", "--json").stdout)
    assert status["status"] == "completed"


def test_status_and_logs_into_a_closed_pipe_exit_141(tmp_path: Path) -> None:
    """A closed pipe: `phasegate status | head` and `phasegate logs | head` exit 141 quietly,
    as other command-line tools do, never 1."""
    repo = make_repo(tmp_path / "repo")
    assert phasegate(repo, "run", "x").returncode == 0
    for args in (("status", "x"), ("status",), ("logs", "x")):
        assert into_a_closed_pipe(repo, *args, stream="stdout") == SIGPIPE_EXIT, args
