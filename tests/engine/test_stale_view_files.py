"""A run killed between replacing ``.engine.json`` and writing the files derived from it
(``.meta.json``, the team workflow's ``status.json``) left those files one commit behind.
The next run writes them again from the state before anything else, since the team
workflow's actions read ``status.json`` (its Definition of Done used to find a stale
``current_state`` after such a crash and ask the user about a failure that did not exist).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine_helpers import approving_script, init_repo
from ruamel.yaml import YAML

KILLED = -9
META = Path("docs/features/x/.meta.json")


def phasegate(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, **env},
    )


def test_a_run_writes_the_view_files_again_before_its_first_step(tmp_path: Path) -> None:
    """``.meta.json`` as a crash after a state commit leaves it (from the commit before):
    the next run rewrites it before its first journal record, so even a run killed at
    once leaves it matching the state."""
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w", encoding="utf-8") as handle:
        YAML().dump(approving_script(), handle)
    assert phasegate(repo, "new", "x", "-d", "a thing").returncode == 0
    assert phasegate(repo, "run", "x", "--until", "brainstorm").returncode == 0
    behind = (repo / META).read_bytes()
    assert phasegate(repo, "run", "x", "--until", "specify").returncode == 0
    current = (repo / META).read_bytes()
    assert behind != current
    (repo / META).write_bytes(behind)
    killed = phasegate(repo, "run", "x", PHASEGATE_CRASH_AT="journal.before_append@1")
    assert killed.returncode == KILLED, killed.stderr
    assert (repo / META).read_bytes() == current
