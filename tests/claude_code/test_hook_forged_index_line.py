"""The SessionStart hook does not take an item index line's word that an item ended: a
line saying ``completed`` for an item whose engine state file says it is active (written
by hand, e.g. by an agent's shell command, or left from another version of the file)
does not hide the item. A line phasegate wrote for an item that did end still leaves it
out."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import init_repo, phasegate

from phasegate.integrations.claude_code.hook import session_context


def _repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    for name in ("shown", "hidden"):
        made = phasegate(repo, "new", name, "--description", f"Item {name}")
        assert made.returncode == 0, made.stderr
    return repo


def _last_line(repo: Path, item: str) -> bytes:
    index = repo / ".phasegate" / "cache" / "index.jsonl"
    lines = [
        line
        for line in index.read_bytes().splitlines()
        if line.startswith(b'{"item": "feature/' + item.encode() + b'"')
    ]
    return lines[-1]


def _append(repo: Path, line: bytes) -> None:
    with (repo / ".phasegate" / "cache" / "index.jsonl").open("ab") as index:
        index.write(line + b"\n")


def _forged(line: bytes, how: str, state: Path) -> bytes:
    entry = json.loads(line)
    if how == "head only":  # the line edited in place: its head says completed
        return line.replace(b'"status": "active", "worktree"', b'"status": "completed", "worktree"')
    entry["status"] = "completed"
    entry["brief"]["status"] = "completed"
    if how == "head and brief":  # the state file's identity copied from a stat
        found = os.stat(state)
        entry["state"] = [found.st_ino, found.st_size, found.st_mtime_ns]
    else:  # "another version": a line for a state file that is no longer there
        entry["state"] = [1, 2, 3]
    return json.dumps(entry).encode()


@pytest.mark.parametrize("how", ["head only", "head and brief", "another version"])
def test_a_forged_completed_line_does_not_hide_an_active_item(tmp_path: Path, how: str) -> None:
    repo = _repo(tmp_path)
    state = repo / "docs" / "features" / "hidden" / ".engine.json"
    before = session_context({"cwd": str(repo)}, environ={})
    assert "## hidden (workflow feature" in before, before

    _append(repo, _forged(_last_line(repo, "hidden"), how, state))
    context = session_context({"cwd": str(repo)}, environ={})
    assert "phasegate: 2 active work items" in context, context
    assert "## hidden (workflow feature" in context, context
    assert "- Next command: phasegate run hidden" in context, context
    assert "## shown (workflow feature" in context, context


def test_an_item_that_ended_is_still_left_out(tmp_path: Path) -> None:
    """The same check, for the line phasegate wrote when the item ended (here: its state
    file says ``stopped``, as an item stopped at an end does)."""
    repo = _repo(tmp_path)
    state = repo / "docs" / "features" / "hidden" / ".engine.json"
    line = _last_line(repo, "hidden")
    text = state.read_bytes()
    brief = json.dumps(json.loads(line)["brief"]).encode()
    assert b'\n "brief": ' + brief in text
    ended = brief.replace(b'"status": "active"', b'"status": "stopped"', 1)
    state.write_bytes(text.replace(b'\n "brief": ' + brief, b'\n "brief": ' + ended))
    found = os.stat(state)
    entry = json.loads(line)
    entry.update(status="stopped", state=[found.st_ino, found.st_size, found.st_mtime_ns])
    entry["brief"]["status"] = "stopped"
    _append(repo, json.dumps(entry).encode())

    context = session_context({"cwd": str(repo)}, environ={})
    assert "phasegate: 1 active work item " in context, context
    assert "hidden" not in context, context
