"""What the record of phasegate's own files takes as known between agent calls is never
stale: the journal's end is compared exactly as if the record and phasegate's own lines
were joined, a call in the repository under another spelling is a call in the work tree,
and the ``.phasegate/`` folder kept for one repository is not used for another."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from test_protected_files import ITEM_DIR, journal, repo_with_agents

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.engine.protect import WorktreeRecord
from phasegate.engine.protect_cache import JOURNAL_TAIL, ReadCache, _JournalRecord, _record
from phasegate.engine.runner import RunOptions

SIZES = [0, 1, 300, JOURNAL_TAIL - 1, JOURNAL_TAIL, JOURNAL_TAIL + 1, JOURNAL_TAIL + 5000]
OWN = [0, 1, 250, JOURNAL_TAIL - 1, JOURNAL_TAIL, JOURNAL_TAIL + 7]


def records(path: Path, size: int, rng: random.Random) -> list[_JournalRecord]:
    """The journal at ``path`` recorded each way: read whole, read on from a shorter
    record (its last bytes taken from the content), and from a fresh read."""
    content = rng.randbytes(size)
    path.write_bytes(content[: size // 2])
    cache = ReadCache()
    cache.journal(path)
    path.write_bytes(content)
    read_on = cache.journal(path)
    assert read_on.size == size
    return [read_on, _record(path), ReadCache().journal(path)]


def candidates(expected: bytes, rng: random.Random) -> list[bytes]:
    found = [expected, expected[1:], expected + b"x", expected[:-1]]
    for at in {0, len(expected) // 2, len(expected) - 1, rng.randrange(max(len(expected), 1))}:
        if 0 <= at < len(expected):
            found.append(expected[:at] + bytes([expected[at] ^ 1]) + expected[at + 1 :])
    return found


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("own", OWN)
def test_the_journals_end_is_compared_as_if_joined(tmp_path: Path, size: int, own: int) -> None:
    rng = random.Random(size * 1000 + own)
    for record in records(tmp_path / ".journal.jsonl", size, rng):
        record.own += rng.randbytes(own)
        expected = record.expected_tail()
        for found in candidates(expected, rng):
            assert record.is_expected_tail(found) == (found == expected)


def test_a_same_size_rewrite_of_an_earlier_journal_line_is_undone(tmp_path: Path) -> None:
    """The journal's end as phasegate left it is compared byte by byte: an event changed in
    place (the journal keeping its size) is found and put back."""
    root = tmp_path / "repo"
    repo = repo_with_agents(root)
    path = root / ITEM_DIR / ".journal.jsonl"
    tampered: list[bytes] = []

    def handler(request: AgentRequest) -> ScriptedReply:
        if not tampered:
            content = path.read_bytes()
            tampered.append(content)
            with open(path, "r+b") as handle:  # in place: same inode, same size
                handle.write(content[:8].replace(b"ts", b"TS"))
        if request.role == "executor":
            return ScriptedReply(write={"{item_dir}/brainstorm.md": "# Brainstorm\nideas\n"})
        return ScriptedReply(structured={"approved": True, "issues": [], "summary": "ok"})

    repo.run(
        "item",
        backends={"default": ScriptedBackend(handler=handler)},
        options=RunOptions(until="brainstorm"),
    )
    assert tampered[0].startswith(b'{"ts"')
    assert path.read_bytes().startswith(tampered[0])
    violations = [e for e in journal(root) if e["event"] == "agent.violation"]
    assert [v["paths"] for v in violations] == [[f"{ITEM_DIR.as_posix()}/.journal.jsonl"]]


def test_a_call_in_the_repository_is_no_worktree_call_however_spelled(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = repo_with_agents(root)
    item = repo.item("item")
    link = tmp_path / "link"
    link.symlink_to(root)
    (root / "sub").mkdir()
    assert WorktreeRecord.of(item, item.repo, ()) is None
    assert WorktreeRecord.of(item, Path(os.fspath(item.repo)), ()) is None
    assert WorktreeRecord.of(item, link, ()) is None
    assert WorktreeRecord.of(item, root / "sub" / "..", ()) is None
    other = tmp_path / "worktree"
    (other / ".phasegate").mkdir(parents=True)
    (other / ".phasegate" / "config.yaml").write_text("roles: {}\n")
    found = WorktreeRecord.of(item, other, ())
    assert found is not None and list(found.files) == [str(other / ".phasegate" / "config.yaml")]


def test_the_phasegate_folder_is_the_one_of_the_repository_asked_about(tmp_path: Path) -> None:
    cache = ReadCache()
    first, second = tmp_path / "a", tmp_path / "b"
    assert cache.config_dir(first) == first / ".phasegate"
    assert cache.config_dir(second) == second / ".phasegate"
    assert cache.config_dir(Path(os.fspath(first))) == first / ".phasegate"
