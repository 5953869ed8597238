"""The record of phasegate's own files is kept from one agent call to the next, and files
are read again only when they changed: a change that keeps a file's size and modification
time, or that falls in the same clock tick as phasegate's own write, is still found."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from test_protected_files import ITEM_DIR, journal, repo_with_agents

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.engine.protect_snapshot import SETTLED_NS, ReadCache
from phasegate.engine.runner import RunOptions

LONG_AGO = (1_600_000_000, 1_600_000_000)


def settled(path: Path, text: str) -> None:
    """Write ``path`` and date it long ago (as config files usually are)."""
    path.write_text(text)
    os.utime(path, LONG_AGO)


def wait_until_settled() -> None:
    time.sleep(SETTLED_NS / 1e9 + 0.05)


def test_a_file_written_just_before_it_was_read_is_read_again(tmp_path: Path) -> None:
    """A write in the same clock tick can keep size and times: such a file is not trusted
    by its signature."""
    path = tmp_path / "state.json"
    path.write_text('{"phase": "a"}')
    cache = ReadCache()
    assert cache.read(path).content == b'{"phase": "a"}'
    path.write_text('{"phase": "b"}')  # same size, very likely the same tick
    assert cache.read(path).content == b'{"phase": "b"}'


def test_a_same_size_change_with_its_old_mtime_put_back_is_found(tmp_path: Path) -> None:
    """An agent that restores the modification time still changes the change time."""
    path = tmp_path / "config.yaml"
    settled(path, "roles: {default: {backend: scripted}}\n")
    wait_until_settled()
    cache = ReadCache()
    before = cache.read(path)
    path.write_text("roles: {default: {backend: auto____}}\n")
    os.utime(path, LONG_AGO)
    assert cache.read(path) != before
    assert b"auto" in cache.read(path).content


def test_an_unchanged_settled_file_is_not_read_again(tmp_path: Path) -> None:
    """The point of the cache: a settled file with the same signature is taken from it."""
    path = tmp_path / "prompt.md"
    settled(path, "Review it.\n")
    wait_until_settled()
    cache = ReadCache()
    first = cache.read(path)
    second = cache.read(path)
    assert second is first  # the same record, not a new read


def test_a_folder_listing_sees_a_file_added_in_the_same_tick(tmp_path: Path) -> None:
    folder = tmp_path / "workflows"
    folder.mkdir()
    (folder / "a.yaml").write_text("a")
    cache = ReadCache()
    assert cache.listing(str(folder)).files == ("a.yaml",)
    (folder / "b.yaml").write_text("b")
    assert cache.listing(str(folder)).files == ("a.yaml", "b.yaml")


def test_the_journal_is_read_on_from_where_it_ended(tmp_path: Path) -> None:
    path = tmp_path / ".journal.jsonl"
    path.write_bytes(b'{"event": "a"}\n')
    cache = ReadCache()
    assert cache.journal(path).whole == b'{"event": "a"}\n'
    with open(path, "ab") as handle:
        handle.write(b'{"event": "b"}\n')
    found = cache.journal(path)
    assert found.whole == b'{"event": "a"}\n{"event": "b"}\n'
    assert found.size == len(found.whole) and found.tail == found.whole
    path.write_bytes(b'{"event": "X"}\n')  # rewritten, shorter: recorded again from scratch
    assert cache.journal(path).whole == b'{"event": "X"}\n'
    path.write_bytes(b'{"event": "Y"}\n{"event": "Z"}\n')  # rewritten, longer
    assert cache.journal(path).whole == b'{"event": "Y"}\n{"event": "Z"}\n'


@pytest.mark.parametrize("call", [1, 2])
def test_a_tamper_keeping_size_and_mtime_is_undone_on_any_call(tmp_path: Path, call: int) -> None:
    """Across the calls of one run (the record is kept between them), a same-size rewrite of
    the config with its modification time put back is undone and fails the call."""
    root = tmp_path / "repo"
    repo = repo_with_agents(root, retries={"agent": 1})
    config = root / ".phasegate" / "config.yaml"
    os.utime(config, LONG_AGO)
    wait_until_settled()
    original = config.read_bytes()
    forged = original.replace(b"scripted", b"auto____")
    assert len(forged) == len(original)
    calls: list[str] = []

    def handler(request: AgentRequest) -> ScriptedReply:
        calls.append(request.role)
        if len(calls) == call:
            stat = config.stat()
            config.write_bytes(forged)
            os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        if request.role == "executor":
            return ScriptedReply(write={"{item_dir}/brainstorm.md": "# Brainstorm\nideas\n"})
        return ScriptedReply(structured={"approved": True, "issues": [], "summary": "ok"})

    repo.run(
        "item",
        backends={"default": ScriptedBackend(handler=handler)},
        options=RunOptions(until="brainstorm"),
    )
    assert config.read_bytes() == original
    violations = [e for e in journal(root) if e["event"] == "agent.violation"]
    assert [v["paths"] for v in violations] == [[".phasegate/config.yaml"]]
    assert (root / ITEM_DIR / "brainstorm.md").exists()
    assert len(calls) == 3  # the call that tampered failed and was made again
