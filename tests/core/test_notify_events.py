"""Notify events: a dropped item is announced as `stopped`, a run that did nothing is not."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))
from review_loop_cli_helpers import ITEM, approving_agents, review_loop_repo, run_cli


def recording(repo: Path) -> Path:
    """Configure a notify command that appends every event it hears to a file."""
    heard = repo.parent / "heard.jsonl"
    config = repo / ".phasegate" / "config.yaml"
    command = json.dumps(f"cat >> {heard}")
    config.write_text(config.read_text() + f"\nnotify:\n  command: {command}\n")
    return heard


def events(heard: Path) -> list[dict[str, Any]]:
    if not heard.exists():
        return []
    return [json.loads(line) for line in heard.read_text().splitlines() if line.strip()]


def test_a_dropped_item_is_announced_stopped_once(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo", approving_agents(critic="REJECTED"))
    heard = recording(repo)
    assert run_cli(repo, "run", ITEM).returncode == 3
    assert run_cli(repo, "answer", ITEM, "plan-rejected", "drop").returncode == 0
    dropped = run_cli(repo, "run", ITEM)
    assert dropped.returncode == 0, dropped.stderr
    assert "stopped" in dropped.stderr
    assert [e["event"] for e in events(heard)] == ["waiting", "stopped"]
    assert events(heard)[-1]["exit_code"] == 0
    # Running the dropped item again does nothing, and says nothing to the notify command.
    again = run_cli(repo, "run", ITEM)
    assert again.returncode == 0, again.stderr
    assert "nothing to run" in again.stderr + again.stdout
    assert [e["event"] for e in events(heard)] == ["waiting", "stopped"]


def test_a_completed_item_is_announced_once(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo")
    heard = recording(repo)
    assert run_cli(repo, "run", ITEM).returncode == 0
    assert [e["event"] for e in events(heard)] == ["completed"]
    for _ in range(2):
        again = run_cli(repo, "run", ITEM)
        assert again.returncode == 0, again.stderr
    assert [e["event"] for e in events(heard)] == ["completed"]


def test_stopped_can_be_chosen_alone(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo", approving_agents(critic="REJECTED"))
    heard = recording(repo)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "  on: [stopped]\n")
    assert run_cli(repo, "run", ITEM).returncode == 3
    assert run_cli(repo, "run", ITEM, "--answer", "plan-rejected=drop").returncode == 0
    assert [e["event"] for e in events(heard)] == ["stopped"]
