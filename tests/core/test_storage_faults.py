"""Writes the disk refuses: a typed error naming the file, and nothing recorded lost.

The disk is a real one: a small tmpfs filled to the last byte, mounted in a
private mount namespace (``unshare -Urm``) by a child process that does the
writes and reports what it saw as JSON.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: Mounts a 1 MiB tmpfs at argv[1], runs the case named by argv[2], prints the outcome.
CASES = """\
import errno, json, os, subprocess, sys
from pathlib import Path
from phasegate.errors import StorageError
from phasegate.state.atomic import atomic_write_text
from phasegate.state.journal import Journal

mount, case = Path(sys.argv[1]), sys.argv[2]
mount.mkdir(parents=True, exist_ok=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)

def fill(leave=0):
    fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    os.close(fd)

out = {}
if case in ("atomic", "atomic-lazy"):
    target = mount / "state.json"
    atomic_write_text(target, "old state\\n")
    fill()
    try:
        atomic_write_text(target, "new state " * 100_000, durable=case == "atomic")
    except StorageError as exc:
        out["error"] = str(exc)
    out["content"] = target.read_text()
    out["files"] = sorted(p.name for p in mount.iterdir())
elif case == "journal":
    journal = Journal(mount / "journal.jsonl")
    journal.append("first", n=1)
    fill()  # the journal's last page still has room: the next line is cut short
    try:
        journal.append("second", text="x" * 50_000)
    except StorageError as exc:
        out["error"] = str(exc)
    out["events"] = [e["event"] for e in journal.events()]
    out["raw_ends_with_newline"] = (mount / "journal.jsonl").read_bytes().endswith(b"\\n")
print(json.dumps(out))
"""


def run_case(tmp_path: Path, case: str) -> dict[str, object]:
    if not shutil.which("unshare") or not sys.platform.startswith("linux"):
        pytest.skip("needs unshare (Linux)")
    if subprocess.run(["unshare", "-Urm", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs a private mount namespace (unshare -Urm)")
    script = tmp_path / "cases.py"
    script.write_text(CASES)
    mount = tmp_path / "disk"
    done = subprocess.run(
        ["unshare", "-Urm", sys.executable, str(script), str(mount), case],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    outcome: dict[str, object] = json.loads(done.stdout)
    outcome["mount"] = str(mount)
    return outcome


def test_atomic_write_on_a_full_disk_keeps_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    """ENOSPC mid-write: StorageError naming the file; the old content stays, no temp file."""
    outcome = run_case(tmp_path, "atomic")
    assert outcome["error"] == (
        f"cannot write {outcome['mount']}/state.json: no space left on the device (ENOSPC); "
        "what was already recorded is kept: fix this and run the same command again"
    )
    assert outcome["content"] == "old state\n"
    assert outcome["files"] == ["filler", "state.json"]


def test_lazy_atomic_write_on_a_full_disk_keeps_the_old_file_and_no_temp_file(
    tmp_path: Path,
) -> None:
    """The same without fsync (a step's commit): nothing is lost."""
    outcome = run_case(tmp_path, "atomic-lazy")
    assert str(outcome["error"]).startswith(
        f"cannot write {outcome['mount']}/state.json: no space left on the device (ENOSPC)"
    )
    assert outcome["content"] == "old state\n"
    assert outcome["files"] == ["filler", "state.json"]


def test_journal_line_cut_short_by_a_full_disk_is_taken_back(tmp_path: Path) -> None:
    """A line the disk took only part of is removed again: the journal ends with its
    last complete event, which is still there."""
    outcome = run_case(tmp_path, "journal")
    assert "journal.jsonl: no space left on the device (ENOSPC)" in str(outcome["error"])
    assert outcome["events"] == ["first"]
    assert outcome["raw_ends_with_newline"] is True
