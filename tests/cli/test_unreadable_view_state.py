"""A view's state file that cannot be read is named with the reason in words (``a folder is
where a file belongs (EISDIR)``), not Python's raw ``[Errno 21] Is a directory: '...'``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from phasegate.errors import ExitCode


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_an_unreadable_view_state_file_is_named_with_the_reason_in_words(
    tmp_path: Path,
) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    assert phasegate(repo, "new", "x", "--mode", "quick").returncode == 0
    meta = repo / "docs" / "features" / "x" / ".meta.json"
    meta.unlink()
    meta.mkdir()  # a folder where the file belongs: unreadable even for root
    for args in (["status", "x"], ["run", "x"]):
        ran = phasegate(repo, *args)
        assert ran.returncode == ExitCode.STATE, ran.stderr
        (line,) = ran.stderr.strip().splitlines()
        assert line == (
            f"phasegate: error: state file {meta} cannot be read: "
            "a folder is where a file belongs (EISDIR)"
        ), line
        assert "Errno" not in line
