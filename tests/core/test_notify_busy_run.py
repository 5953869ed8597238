"""A run that finds its item being run by another phasegate process (exit code 7) did
nothing: it announces nothing, so a notify command never hears `failed` for an item
that is going on well (the run that holds it announces its own end)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import filelock

sys.path.insert(0, str(Path(__file__).parent.parent))
from review_loop_cli_helpers import ITEM, review_loop_repo, run_cli


def test_a_run_refused_as_busy_announces_nothing(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo")
    heard = tmp_path / "heard.jsonl"
    config = repo / ".phasegate" / "config.yaml"
    command = json.dumps(f"cat >> {heard}")
    config.write_text(config.read_text() + f"\nnotify:\n  command: {command}\n")
    lock = repo / ".phasegate" / "locks" / f"review-loop--{ITEM}.run.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(lock), timeout=0):  # another process runs the item
        busy = run_cli(repo, "run", ITEM)
    assert busy.returncode == 7, busy.stderr
    assert "being run by another phasegate process" in busy.stderr
    assert not heard.exists(), heard.read_text()
    # The run that ends the item is announced as before.
    assert run_cli(repo, "run", ITEM).returncode == 0
    assert [json.loads(line)["event"] for line in heard.read_text().splitlines()] == ["completed"]
