"""State files: atomic replacement, corrupt files refused and left untouched, and
read-modify-write transactions that lose no update across processes (seed 000 risk
"state corruption during update": read-modify-write pattern, atomic file writes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from phasegate.errors import ExitCode, StateCorruptError, StorageError
from phasegate.redact import MASK, Redactor
from phasegate.state.atomic import atomic_write_bytes, atomic_write_text, remove_file
from phasegate.state.store import StateFormat, StateStore, dump_state, parse_state

SECRET = "sk-" + "proj-" + "Q1w2E3r4T5y6U7i8O9p0A1s2"


def store_at(tmp_path: Path, fmt: StateFormat = "json", name: str = "state.json") -> StateStore:
    return StateStore(tmp_path / name, tmp_path / f".{name}.lock", fmt, Redactor(use_environ=False))


def test_atomic_write_replaces_content_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    for n in range(5):
        atomic_write_text(target, f'{{"n": {n}}}\n')
    assert target.read_text(encoding="utf-8") == '{"n": 4}\n'
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def test_failed_atomic_write_removes_its_temp_file_and_keeps_the_target(tmp_path: Path) -> None:
    """os.replace fails (the target is a non-empty directory): nothing half-written remains."""
    target = tmp_path / "state.json"
    target.mkdir()
    (target / "keep").write_text("x", encoding="utf-8")
    with pytest.raises(StorageError, match="a folder is where a file belongs"):
        atomic_write_bytes(target, b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
    assert (target / "keep").read_text(encoding="utf-8") == "x"


def test_crash_before_replace_leaves_the_old_file_whole(tmp_path: Path) -> None:
    """A SIGKILL between writing the temp file and renaming it never tears the target."""
    target = tmp_path / "state.json"
    target.write_text('{"old": true}\n', encoding="utf-8")
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from phasegate.state.atomic import atomic_write_text
        atomic_write_text(Path({str(target)!r}), '{{"new": true}}\\n')
        """
    )
    env = {**os.environ, "PHASEGATE_CRASH_AT": "atomic.before_replace"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, check=False, timeout=30)
    assert proc.returncode == -9  # killed at the crash point, as a power cut would
    assert target.read_text(encoding="utf-8") == '{"old": true}\n'


def test_remove_file_reports_whether_it_existed(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_text("x", encoding="utf-8")
    assert remove_file(path) is True
    assert remove_file(path) is False


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_commit_then_load_round_trips(tmp_path: Path, fmt: StateFormat) -> None:
    store = store_at(tmp_path, fmt, f"state.{fmt}")
    data = {"currentPhase": "design", "phases": {"specify": {"iterations": 2}}, "ünï": "ok"}
    store.commit(data)
    assert store.load() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".state.{fmt}.lock", f"state.{fmt}"]


CORRUPT = [
    ("json", b'{"currentPhase": "des', "corrupt"),
    ("json", b"", "empty"),
    ("json", b"  \n", "empty"),
    ("json", b'["not", "an", "object"]', "does not hold an object"),
    ("json", b"\xff\xfe{}", "corrupt"),
    ("yaml", b"currentPhase: [design\n", "corrupt"),
    ("yaml", b"- a\n- b\n", "does not hold an object"),
    ("yaml", b"just a string\n", "does not hold an object"),
]


@pytest.mark.parametrize(
    ("fmt", "raw", "reason"),
    CORRUPT,
    ids=[
        "truncated-json",
        "empty",
        "blank",
        "json-list",
        "not-utf8",
        "invalid-yaml",
        "yaml-list",
        "yaml-scalar",
    ],
)
def test_corrupt_state_raises_naming_the_path_and_stays_byte_identical(
    tmp_path: Path, fmt: StateFormat, raw: bytes, reason: str
) -> None:
    """A corrupt state file is refused with exit code STATE, and never overwritten."""
    store = store_at(tmp_path, fmt)
    store.path.write_bytes(raw)
    with pytest.raises(StateCorruptError) as caught:
        store.load()
    assert str(store.path) in str(caught.value)
    assert reason in str(caught.value)
    assert caught.value.exit_code == ExitCode.STATE
    with pytest.raises(StateCorruptError), store.transaction() as data:
        data["overwritten"] = True
    assert store.path.read_bytes() == raw


def test_parse_state_error_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(StateCorruptError) as caught:
        parse_state(b"{\n\n broken", tmp_path / "s.json", "json")
    assert "\n" not in str(caught.value)


def test_transaction_commits_the_mutated_document(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.commit({"n": 1})
    with store.transaction() as data:
        data["n"] += 1
    assert store.load() == {"n": 2}


def test_transaction_that_raises_commits_nothing(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.commit({"n": 1})
    before = store.path.read_bytes()
    with pytest.raises(RuntimeError), store.transaction() as data:
        data["n"] = 99
        raise RuntimeError("abort")
    assert store.path.read_bytes() == before


def test_secrets_are_redacted_in_committed_state(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.commit({"phases": {"specify": {"reviewerNotes": [f"key {SECRET} in spec"]}}})
    raw = store.path.read_text(encoding="utf-8")
    assert SECRET not in raw
    assert json.loads(raw)["phases"]["specify"]["reviewerNotes"] == [f"key {MASK} in spec"]


def test_yaml_state_is_block_style_in_insertion_order(tmp_path: Path) -> None:
    """State files are for people to read too (seed 002's STATE.yaml)."""
    text = dump_state({"phase": "plan", "archived": False, "tasks": ["a"]}, "yaml").decode()
    assert text == "phase: plan\narchived: false\ntasks:\n- a\n"


INCREMENTER = """
import sys, time
from pathlib import Path
from phasegate.state.store import StateStore

path, ready, go, count = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
store = StateStore(path, path.with_name(".state.json.lock"))
ready.touch()
while not go.exists():
    time.sleep(0.005)
for _ in range(count):
    with store.transaction() as data:
        data["n"] += 1
        data.setdefault("by", {}).setdefault(sys.argv[5], 0)
        data["by"][sys.argv[5]] += 1
"""


def test_concurrent_transactions_in_two_processes_lose_no_update(tmp_path: Path) -> None:
    """Two processes x 200 read-modify-write increments end at exactly 400."""
    store = store_at(tmp_path)
    store.commit({"n": 0})
    go = tmp_path / "go"
    workers = []
    for name in ("a", "b"):
        ready = tmp_path / f"ready-{name}"
        paths = [str(p) for p in (store.path, ready, go)]
        argv = [sys.executable, "-c", INCREMENTER, *paths, "200", name]
        workers.append((ready, subprocess.Popen(argv)))
    try:
        for ready, proc in workers:
            for _ in range(600):
                if ready.exists() or proc.poll() is not None:
                    break
                time.sleep(0.05)
        go.touch()  # both start incrementing together
        codes = [proc.wait(timeout=120) for _, proc in workers]
    finally:
        for _, proc in workers:
            if proc.poll() is None:
                proc.kill()
    assert codes == [0, 0]
    assert store.load() == {"n": 400, "by": {"a": 200, "b": 200}}
