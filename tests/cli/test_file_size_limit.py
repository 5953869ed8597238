"""A file size limit (``ulimit -f``, RLIMIT_FSIZE) that a write passes: one line naming
the file and the limit, exit code 8 (never "internal error"), nothing recorded lost, and
without the limit the same command carries on."""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

ITEM = Path("docs/features/x")


def phasegate(
    repo: Path, *args: str, limit: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        preexec_fn=limit,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the approving scripted agents and a new item ``x``."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    with open(root / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(root, "new", "x", "--mode", "quick").returncode == 0
    return root


def test_a_write_past_the_file_size_limit_is_exit_8_naming_the_file(repo: Path) -> None:
    first = phasegate(repo, "run", "x", "--until", "brainstorm")
    assert first.returncode == 0, first.stderr
    journal = repo / ITEM / ".journal.jsonl"
    before = journal.read_text()
    size = len(before.encode()) + 200  # room for a line or two, not for the next phase

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    limited = phasegate(repo, "run", "x", limit=limit)
    errors = [line for line in limited.stderr.splitlines() if line.startswith("phasegate:")]
    assert limited.returncode == 8, limited.stderr
    assert len(errors) == 1, limited.stderr
    assert errors[0].startswith(f"phasegate: error: cannot write {repo / ITEM}/"), errors[0]
    assert "file too large (a file size limit: see ulimit -f) (EFBIG)" in errors[0]
    after = journal.read_text()
    assert after.startswith(before) and after.endswith("\n")
    resumed = phasegate(repo, "run", "x")
    assert resumed.returncode == 0, resumed.stderr
