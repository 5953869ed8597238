"""The configuration `phasegate init` writes stays valid when a person uncomments the
example test command it shows under `commands:`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_uncommenting_the_example_test_command_gives_a_working_config(tmp_path: Path) -> None:
    """A project with no evident test command gets the example commented out; removing the
    `# ` before it, as a person does, configures it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    ran = phasegate(repo, "init")
    assert ran.returncode == 0, ran.stderr
    config = repo / ".phasegate" / "config.yaml"
    text = config.read_text()
    assert "# test: python -m pytest -q" in text
    assert phasegate(repo, "status").returncode == 0
    config.write_text(text.replace("# test: python -m pytest -q", "test: python -m pytest -q"))
    status = phasegate(repo, "status")
    assert status.returncode == 0, status.stderr
    assert "invalid YAML" not in status.stderr
    from phasegate.config import load_config

    assert load_config(repo).commands == {"test": "python -m pytest -q"}
