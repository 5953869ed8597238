"""`python -m phasegate.demo DIR` replaces DIR: only a new or empty folder, or one an earlier
demo made, is replaced; a folder holding anything else is left as it is (exit code 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def demo(target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate.demo", str(target)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_demo_refuses_a_folder_of_the_users(tmp_path: Path) -> None:
    target = tmp_path / "project"
    target.mkdir()
    (target / "notes.md").write_text("my own work\n", "utf-8")
    result = demo(target)
    assert result.returncode == 2, result.stdout + result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith(f"demo: {target} exists and is not a folder an earlier demo made")
    assert (target / "notes.md").read_text() == "my own work\n"
    assert not (target / ".phasegate").exists()


def test_demo_replaces_its_own_earlier_folder(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    assert demo(target).returncode == 0
    again = demo(target)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "rate-limit complete" in again.stdout + again.stderr
