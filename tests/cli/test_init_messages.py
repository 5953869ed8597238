"""`phasegate init` on a machine with no agent CLI says, where the user reads it, that every
role answers from a script it did not write; with a CLI it says nothing of the kind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def init(repo: Path, clis: str) -> subprocess.CompletedProcess[str]:
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "init"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, "PHASEGATE_AGENT_CLIS": clis},
    )


@pytest.mark.parametrize("clis", ["", "claude"])
def test_init_says_when_no_agent_cli_was_found(tmp_path: Path, clis: str) -> None:
    """The quick start's run then failed on a missing agents.yaml, told only in a comment
    inside the config."""
    ran = init(tmp_path / "repo", clis)
    assert ran.returncode == 0, ran.stderr
    said = "No agent CLI (claude, codex, gemini) was found on PATH" in ran.stdout
    assert said == (clis == "")
    if said:
        assert "scripted backend, which answers from .phasegate/agents.yaml" in ran.stdout
        assert not (tmp_path / "repo" / ".phasegate" / "agents.yaml").exists()
