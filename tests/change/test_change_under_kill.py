"""The change workflow under ``kill -9``: what a killed run leaves behind never reaches the
archive, a killed archive still records every spec it merged, and running a command again
after it finished is not an error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from change_helpers import changes, complete

FOLDER = Path("changes/add-oauth")
#: A temp file an atomic write leaves when its process is killed (the pid is not running).
LEFTOVER = ".{name}.tmp-999999999-deadbeef"


def phasegate(
    repo: Path, *args: str, crash_at: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    if crash_at is not None:
        env["PHASEGATE_CRASH_AT"] = crash_at
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env=env,
    )


def temp_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.tmp-*"))


def test_leftover_temp_files_are_never_moved_into_the_archive(repo: Path) -> None:
    """Temp files of killed writes, in the change folder and its subfolders, are removed
    before the folder moves into the archive; so are those of the living specs it writes."""
    complete(repo, "add-oauth")
    folder = repo / FOLDER
    for where in (folder, folder / "specs", folder / "reviews"):
        where.mkdir(exist_ok=True)
        (where / LEFTOVER.format(name="STATE.yaml")).write_text("half a write")
    killed = phasegate(repo, "archive", "add-oauth", crash_at="atomic.before_replace")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = [p for p in temp_files(repo) if "999999999" not in p and not p.startswith(".git/")]
    assert left, "the kill left no temp file: the test would prove nothing"
    done = phasegate(repo, "archive", "add-oauth")
    assert done.returncode == 0, done.stderr
    (archived,) = (repo / "changes" / "archive").iterdir()
    assert (archived / "STATE.yaml").is_file()
    assert temp_files(archived) == []
    assert temp_files(repo / "specs") == []


def test_a_killed_archive_records_every_spec_it_merged(repo: Path) -> None:
    """An archive killed after merging its first spec, run again, records both specs as merged
    (in its outcome and the journal), exactly as an archive that was never killed."""
    complete(repo, "add-oauth")
    killed = phasegate(repo, "archive", "add-oauth", crash_at="archive.after_merge@1")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    merged_first = sorted(p.name for p in (repo / "specs").glob("*.md"))
    assert len(merged_first) == 1
    outcome = changes(repo).archive("add-oauth")
    assert sorted(outcome.merged) == ["specs/oauth-login.md", "specs/session.md"]
    journal = outcome.archived_to / ".journal.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    (archived,) = [e for e in events if e["event"] == "change.archived"]
    assert sorted(archived["specs"]) == ["specs/oauth-login.md", "specs/session.md"]


def test_impl_run_again_after_the_change_completed_exits_0_saying_so(repo: Path) -> None:
    """Re-running `impl` on a change that already committed `complete` (a run killed before
    it reported, say) is not an error: exit 0, a message, nothing dispatched."""
    complete(repo, "add-oauth")
    journal = repo / FOLDER / ".journal.jsonl"
    before = journal.read_bytes()
    again = phasegate(repo, "impl", "add-oauth")
    assert again.returncode == 0, again.stderr
    assert "add-oauth is already implemented and approved (phase complete)" in again.stdout
    assert "Next: phasegate archive add-oauth" in again.stdout
    added = journal.read_bytes()[len(before) :].decode()
    assert '"agent.dispatched"' not in added
