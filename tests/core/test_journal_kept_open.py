"""The journal keeps the file of its last append open, and still appends to whatever file
the path names at the time: a file put in its place, a removed file (made again with the
lines it held), a torn line another process left, a file made read-only since."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from phasegate.errors import StorageError
from phasegate.redact import Redactor
from phasegate.state.journal import Journal


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "item" / ".journal.jsonl", Redactor(use_environ=False))


def events(path: Path) -> list[str]:
    return [json.loads(line)["event"] for line in path.read_text().splitlines()]


def test_a_file_put_in_the_journals_place_gets_the_next_line(journal: Journal) -> None:
    journal.append("one")
    replacement = journal.path.with_name("other")
    replacement.write_bytes(b'{"ts": "x", "event": "restored"}\n')
    os.replace(replacement, journal.path)
    journal.append("two")
    assert events(journal.path) == ["restored", "two"]
    assert journal.last_offset == len(b'{"ts": "x", "event": "restored"}\n')


def test_a_removed_journal_is_made_again(journal: Journal) -> None:
    """Made again from the file still open, with the lines it held: none is lost."""
    journal.append("one")
    size = journal.path.stat().st_size
    journal.path.unlink()
    journal.append("two")
    assert events(journal.path) == ["one", "two"]
    assert journal.last_offset == size


def test_a_torn_line_appended_by_another_process_is_cut(journal: Journal) -> None:
    journal.append("one")
    size = journal.path.stat().st_size
    with open(journal.path, "ab") as other:  # another writer, died mid-line
        other.write(b'{"ts": "x", "event": "torn')
    journal.append("two")
    assert events(journal.path) == ["one", "two"]
    assert journal.last_offset == size


def test_lines_another_process_appended_are_kept(journal: Journal) -> None:
    journal.append("one")
    with open(journal.path, "ab") as other:
        other.write(b'{"ts": "x", "event": "answer"}\n')
    size = journal.path.stat().st_size
    journal.append("two")
    assert events(journal.path) == ["one", "answer", "two"]
    assert journal.last_offset == size


def test_a_journal_cut_short_in_place_is_appended_to_at_its_end(journal: Journal) -> None:
    journal.append("one")
    first = journal.path.stat().st_size
    journal.append("two")
    os.truncate(journal.path, first)
    journal.append("three")
    assert events(journal.path) == ["one", "three"]
    assert journal.last_offset == first


def test_a_journal_whose_mode_changed_is_opened_afresh(journal: Journal) -> None:
    """A file made read-only is opened again, so the append fails as it would have (root
    may still write it: this checks the file is not written through the old descriptor)."""
    journal.append("one")
    kept = journal._handle
    journal.path.chmod(0o444)
    try:
        if os.geteuid() != 0:
            with pytest.raises(OSError):
                journal.append("two")
        else:
            journal.append("two")
            assert journal._handle is not kept
            assert events(journal.path) == ["one", "two"]
    finally:
        journal.path.chmod(0o644)


def test_appends_after_a_failed_one_open_the_file_afresh(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal.append("one")
    real_write = os.write

    def failing(fd: int, data: bytes) -> int:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "write", failing)
    with pytest.raises(StorageError):
        journal.append("two")
    assert journal._handle is None
    monkeypatch.setattr(os, "write", real_write)
    journal.append("three")
    assert events(journal.path) == ["one", "three"]


def test_close_lets_go_of_the_file_and_the_next_append_opens_it(journal: Journal) -> None:
    journal.append("one")
    handle = journal._handle
    assert handle is not None
    fd = handle.fd
    journal.close()
    assert journal._handle is None
    with pytest.raises(OSError):
        os.fstat(fd)
    journal.append("two")
    assert events(journal.path) == ["one", "two"]


def test_a_journal_no_longer_used_closes_its_file(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl", Redactor(use_environ=False))
    journal.append("one")
    assert journal._handle is not None
    fd = journal._handle.fd
    del journal
    with pytest.raises(OSError):
        os.fstat(fd)
