"""The append-only JSONL journal: durable appends, torn tails survived, corruption refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from phasegate.errors import StateCorruptError
from phasegate.redact import MASK, Redactor
from phasegate.state.journal import Journal, utc_now

SECRET = "ghp" + "_" + "0123456789abcdefghijABCDEFGHIJ"


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "item" / ".journal.jsonl", Redactor(use_environ=False))


def raw_lines(journal: Journal) -> list[str]:
    return journal.path.read_text(encoding="utf-8").splitlines()


def test_append_writes_one_json_line_with_ts_and_event(journal: Journal) -> None:
    written = journal.append("phase.started", phase="specify", iteration=1)
    [line] = raw_lines(journal)
    record = json.loads(line)
    assert record == written
    assert list(record)[:2] == ["ts", "event"]
    assert record["event"] == "phase.started"
    assert (record["phase"], record["iteration"]) == ("specify", 1)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["ts"])


def test_events_come_back_in_order(journal: Journal) -> None:
    for n in range(3):
        journal.append("tick", n=n)
    assert [e["n"] for e in journal.events()] == [0, 1, 2]


def test_missing_journal_has_no_events(journal: Journal) -> None:
    assert list(journal.events()) == []


def test_find_returns_the_last_matching_event(journal: Journal) -> None:
    journal.append("agent.result", attempt="a1", text="first")
    journal.append("agent.result", attempt="a2", text="other")
    journal.append("agent.result", attempt="a1", text="retry")
    found = journal.find("agent.result", attempt="a1")
    assert found is not None
    assert found["text"] == "retry"
    assert journal.find("agent.result", attempt="zz") is None


def test_torn_last_line_is_ignored_on_read(journal: Journal) -> None:
    """A crash mid-append can only tear the last line; readers skip it."""
    journal.append("one")
    with open(journal.path, "ab") as handle:
        handle.write(b'{"ts": "2026-01-30T10:00:00Z", "event": "tw')
    assert [e["event"] for e in journal.events()] == ["one"]


def test_torn_last_line_is_cut_on_the_next_append(journal: Journal) -> None:
    journal.append("one")
    with open(journal.path, "ab") as handle:
        handle.write(b'{"ts": "2026-01-30T10:00:00Z", "event": "tw')
    journal.append("two")
    lines = raw_lines(journal)
    assert [json.loads(line)["event"] for line in lines] == ["one", "two"]
    assert journal.path.read_bytes().endswith(b"\n")


def test_torn_only_line_is_cut_on_the_next_append(journal: Journal) -> None:
    journal.path.parent.mkdir(parents=True)
    journal.path.write_bytes(b'{"ts": "x", "ev')
    journal.append("first")
    assert [json.loads(line)["event"] for line in raw_lines(journal)] == ["first"]


def test_torn_tail_longer_than_a_read_chunk_is_cut(journal: Journal) -> None:
    journal.append("one")
    with open(journal.path, "ab") as handle:
        handle.write(b'{"event": "big", "text": "' + b"x" * 10_000)
    journal.append("two")
    assert [json.loads(line)["event"] for line in raw_lines(journal)] == ["one", "two"]


def test_corrupt_line_in_the_middle_raises_naming_file_and_line(journal: Journal) -> None:
    """Only the last line may be torn; damage elsewhere is corruption, never skipped."""
    journal.append("one")
    with open(journal.path, "ab") as handle:
        handle.write(b"{this is not json}\n")
    journal.append("three")
    before = journal.path.read_bytes()
    with pytest.raises(StateCorruptError) as caught:
        list(journal.events())
    assert str(journal.path) in str(caught.value)
    assert "line 2" in str(caught.value)
    assert journal.path.read_bytes() == before


def test_line_that_is_not_an_object_is_corrupt(journal: Journal) -> None:
    journal.path.parent.mkdir(parents=True)
    journal.path.write_bytes(b'{"event": "ok"}\n[1, 2]\n')
    with pytest.raises(StateCorruptError, match="line 2 is not a JSON object"):
        list(journal.events())


def test_secrets_are_redacted_in_journal_lines(journal: Journal) -> None:
    journal.append("agent.result", text=f"pushed with {SECRET}", nested={"argv": ["-t", SECRET]})
    raw = journal.path.read_text(encoding="utf-8")
    assert SECRET not in raw
    [event] = journal.events()
    assert event["text"] == f"pushed with {MASK}"
    assert event["nested"] == {"argv": ["-t", MASK]}


def test_non_ascii_is_written_as_utf8(journal: Journal) -> None:
    journal.append("note", text="naïve ✅")
    assert "naïve ✅" in journal.path.read_text(encoding="utf-8")


def test_utc_now_is_iso_seconds_with_z() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", utc_now())
