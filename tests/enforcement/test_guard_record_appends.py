"""The on-disk record of a call's guarded files (see test_guard_survives_kill) costs what
changed since the call before, not the item's whole history: each call adds one line to
the record, naming unchanged files without their bytes and giving only the bytes added to
a growing file; the line of a call that ended says so. The record goes with the run."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from test_guard_survives_kill import killed_in_build, make_repo

from cli_process import run_cli


def record_file(root: Path) -> Path:
    """Where the run keeps the item's record: outside the work tree."""
    from phasegate.engine.protect_pending import record_folder

    return record_folder(root) / "twophase--it.guard"


def test_each_call_adds_one_line_holding_only_what_changed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    killed_in_build(root)
    lines = [json.loads(line) for line in record_file(root).read_bytes().splitlines()]
    # specify's call, its end, then build's call (killed before its end).
    assert [bool(line.get("ended")) for line in lines] == [False, True, False], lines
    first, build = lines[0], lines[2]
    assert all(len(entry) == 4 for entry in first["files"]), first  # whole, the first time
    unchanged = [entry[0] for entry in build["files"] if len(entry) == 1]
    assert any(path.endswith("prompts/twophase/build.md") for path in unchanged), build
    assert any(path.endswith("workflows/twophase.yaml") for path in unchanged), build
    written = sum(len(base64.b64decode(e[3] or e[4])) for e in build["files"] if len(e) > 1)
    whole = sum(len(base64.b64decode(e[3])) for e in first["files"])
    assert written < whole, (written, whole)
    # The next run puts back from the lines together, as from one record.
    again = run_cli(root, "run", "it")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (root / "work/it/spec.md").read_text() == "the spec\n"
    assert (root / ".phasegate/prompts/twophase/build.md").read_text() == "Do build.\n"


def test_the_record_goes_with_the_run(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    ran = run_cli(root, "run", "it", "--phase", "specify")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert not record_file(root).exists()
    assert not list((root / ".phasegate/locks").glob("*.guard*"))


def test_a_record_whose_calls_all_ended_puts_nothing_back(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    assert run_cli(root, "run", "it", "--phase", "specify").returncode == 0
    # A run that died after its calls ended (the record says so) left it behind.
    spec = root / "work/it/spec.md"
    record = {"files": [[str(spec), "file", 0o644, base64.b64encode(b"old\n").decode()]]}
    record_file(root).parent.mkdir(parents=True, exist_ok=True)
    record_file(root).write_text(json.dumps(record) + "\n" + '{"ended": true}\n')
    spec.write_text("the person's spec\n")
    again = run_cli(root, "run", "it")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "put back" not in again.stderr
    assert spec.read_text() == "the person's spec\n"
    assert not record_file(root).exists()


def test_a_line_holding_only_a_changed_middle_reads_back_as_the_file() -> None:
    """Each way a file can change between two calls (a byte changed, bytes cut or put in
    anywhere, bytes added at the end) reads back from the record's two lines as the file."""
    import random

    from phasegate.engine.protect_cache import _Copy
    from phasegate.engine.protect_pending import _entry, _read_log

    rng = random.Random(7)
    for _ in range(2000):
        before = bytes(rng.choice(b"ab") for _ in range(rng.randint(0, 40)))
        after = bytearray(before)
        start, end = sorted((rng.randint(0, len(after)), rng.randint(0, len(after))))
        after[start:end] = bytes(rng.choice(b"abc") for _ in range(rng.randint(0, 6)))
        was, now = _Copy("file", before, 0o644), _Copy("file", bytes(after), 0o644)
        lines = [
            {"files": [_entry("f", was, None)], "size": 0, "inode": 0, "tail": ""},
            {"files": [_entry("f", now, was)], "size": 0, "inode": 0, "tail": ""},
        ]
        raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
        document, files = _read_log(raw)
        assert document is not None
        assert files["f"].content == bytes(after), (before, bytes(after), lines[1])
