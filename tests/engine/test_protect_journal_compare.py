"""The journal's end as last read is compared in place (without copies): a journal whose
last bytes as read differ now, by a single byte anywhere in what is checked, is recorded
afresh, and the end found after a call is the expected one only byte for byte."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from phasegate.engine.protect_cache import JOURNAL_CHECKED, JOURNAL_TAIL, ReadCache

LINE = b'{"event": "x", "n": 1234567890}\n'


def journal_of(size: int) -> bytes:
    return (LINE * (size // len(LINE) + 1))[:size]


@pytest.mark.parametrize("size", [10, JOURNAL_CHECKED - 1, JOURNAL_CHECKED, 3 * JOURNAL_CHECKED])
def test_a_byte_changed_in_the_checked_end_is_recorded_afresh(tmp_path: Path, size: int) -> None:
    path = tmp_path / ".journal.jsonl"
    content = journal_of(size)
    checked = range(max(0, size - JOURNAL_CHECKED), size)
    for at in {checked[0], checked[len(checked) // 2], checked[-1]}:
        path.write_bytes(content)
        cache = ReadCache()
        assert cache.journal(path).whole == content
        changed = bytearray(content)
        changed[at] ^= 1
        changed += LINE  # and grown, as if appended to
        with open(path, "r+b") as handle:  # the same file, rewritten in place
            handle.write(changed)
        found = cache.journal(path)
        assert found.whole == bytes(changed)
        assert found.size == len(changed)


def test_an_unchanged_end_is_read_on(tmp_path: Path) -> None:
    path = tmp_path / ".journal.jsonl"
    content = journal_of(3 * JOURNAL_CHECKED)
    path.write_bytes(content)
    cache = ReadCache()
    cache.journal(path)
    with open(path, "ab") as handle:
        handle.write(LINE)
    found = cache.journal(path)
    assert found.whole == content + LINE
    assert found.tail == (content + LINE)[-JOURNAL_TAIL:]


@pytest.mark.parametrize("size", [0, 100, JOURNAL_TAIL - 10, JOURNAL_TAIL + 100])
def test_the_expected_end_is_found_only_byte_for_byte(tmp_path: Path, size: int) -> None:
    rng = random.Random(size)
    path = tmp_path / ".journal.jsonl"
    path.write_bytes(rng.randbytes(size))
    record = ReadCache().journal(path)
    record.own += rng.randbytes(200)
    expected = record.expected_tail()
    assert record.is_expected_tail(expected)
    assert record.is_expected_tail(bytearray(expected))
    for at in {0, len(expected) // 2, len(expected) - 201, len(expected) - 1}:
        if 0 <= at < len(expected):
            wrong = bytearray(expected)
            wrong[at] ^= 1
            assert not record.is_expected_tail(bytes(wrong))
    assert not record.is_expected_tail(expected[1:])
    assert not record.is_expected_tail(expected + b"\n")
