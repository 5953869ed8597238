"""``phasegate answer`` whose answer is journaled but whose state file cannot be written:
exit 8 naming the file, and the line says the answer is recorded and which command goes on
(not "run the same command again", which would be refused as answered already)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from review_loop_helpers import DECISION, FOLDER, ITEM, make_repo, script, words

from phasegate.errors import ExitCode


def without_root_override() -> tuple[str, ...]:
    """A command prefix under which root, too, is refused writes to a read-only folder."""
    if os.geteuid() != 0:
        return ()
    if not shutil.which("setpriv"):
        pytest.skip("root ignores folder permissions and setpriv is not installed")
    return ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")


def cli(repo: Path, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_an_answer_journaled_but_not_committed_says_it_is_recorded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    waiting = cli(repo, "run", ITEM)
    assert waiting.returncode == ExitCode.WAITING, waiting.stderr
    folder = repo / FOLDER
    folder.chmod(0o555)
    try:
        answered = cli(repo, "answer", ITEM, DECISION, "drop", prefix=without_root_override())
    finally:
        folder.chmod(0o755)
    assert answered.returncode == ExitCode.STORAGE, answered.stderr
    line = answered.stderr.strip()
    assert line.startswith(f"phasegate: error: cannot write {folder}/.engine"), line
    assert line.endswith(
        ": permission denied (EACCES); the answer 'drop' to "
        f"{DECISION} is recorded (in the journal): fix this, then go on with phasegate run {ITEM}"
    ), line
    again = cli(repo, "answer", ITEM, DECISION, "drop")
    assert again.returncode == ExitCode.BAD_INPUT  # answered already: it was recorded
    resumed = cli(repo, "run", ITEM)
    assert resumed.returncode == 0, resumed.stderr
