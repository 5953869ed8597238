"""``--json`` output: indented at a terminal, compact into a pipe or a file.

A script reading ``phasegate status --json`` gets the same data either way;
piped, a list has one element per line (so ``grep`` finds an item's line),
written by the C encoder (Python's indenting encoder took most of the time
at a thousand items).
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import phasegate
from engine_helpers import init_repo

from phasegate.cli.output import json_text


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with three new items (only read by the tests)."""
    root = init_repo(tmp_path_factory.mktemp("json") / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    for name in ("alpha", "beta", "gamma"):
        made = phasegate(root, "new", name, "--description", f"Item {name} — ünïcode")
        assert made.returncode == 0, made.stderr
    return root


def test_piped_status_json_is_one_item_per_line(root: Path) -> None:
    done = phasegate(root, "status", "--json")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "[" and lines[-1] == "]"
    items = lines[1:-1]
    assert len(items) == 3
    for line, name in zip(items, ("alpha", "beta", "gamma"), strict=True):
        entry = json.loads(line.rstrip(","))
        assert entry["id"] == name
        assert entry["description"] == f"Item {name} — ünïcode"  # not \\u-escaped
    assert [e["id"] for e in json.loads(done.stdout)] == ["alpha", "beta", "gamma"]


def test_piped_json_of_one_item_is_one_line(root: Path) -> None:
    done = phasegate(root, "status", "beta", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    assert json.loads(done.stdout)["id"] == "beta"


def test_status_json_at_a_terminal_is_indented(root: Path) -> None:
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "phasegate", "status", "--json"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
        )
        os.close(follower)
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 0
    finally:
        os.close(leader)
    text = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    assert text.startswith('[\n  {\n    "id": "alpha",\n')
    assert [e["id"] for e in json.loads(text)] == ["alpha", "beta", "gamma"]


def test_compact_and_indented_json_hold_the_same_data() -> None:
    data = [{"id": "a", "n": [1, 2.5, None], "ok": True, "text": 'é\n"q"'}, {"id": "b"}]
    compact = json_text(data, pretty=False)
    first = '{"id": "a", "n": [1, 2.5, null], "ok": true, "text": "é\\n\\"q\\""}'
    assert compact == "[\n" + first + ',\n{"id": "b"}\n]\n'
    assert json.loads(compact) == json.loads(json_text(data, pretty=True)) == data
    assert json_text([], pretty=False) == "[]\n"
    assert json_text({"a": 1}, pretty=False) == '{"a": 1}\n'
