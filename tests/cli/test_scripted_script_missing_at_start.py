"""A scripted agent's script that does not exist is found before the phase starts: the run
stops with exit 2 naming the file, nothing of the phase is journaled, and the next run
starts the phase afresh instead of asking what to do with a phase left half done."""

from __future__ import annotations

import json
import os
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
        env={**os.environ, "PHASEGATE_AGENT_CLIS": "", "NO_COLOR": "1", "COLUMNS": "200"},
    )


def _events(repo: Path) -> list[str]:
    journal = repo / "docs" / "features" / "s1" / ".journal.jsonl"
    return [json.loads(line)["event"] for line in journal.read_text().splitlines()]


def test_a_missing_script_stops_the_run_before_the_phase_starts(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init").returncode == 0
    agents = repo / ".phasegate" / "agents.yaml"
    assert not agents.exists()
    assert phasegate(repo, "new", "s1", "-d", "x").returncode == 0
    for _ in range(2):  # the second run finds the phase as the first left it: not started
        ran = phasegate(repo, "run", "s1", "--until", "brainstorm")
        assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
        line = ran.stderr.strip().splitlines()[-1]
        assert line.startswith(f"phasegate: error: executor: scripted backend: script {agents} ")
        assert "not found" in line
        assert "partial-phase" not in ran.stdout + ran.stderr
        assert "node.started" not in _events(repo)
    status = phasegate(repo, "status", "s1")
    assert "in progress" not in status.stdout, status.stdout
    agents.write_text(
        'executor: {brainstorm: [{write: {"{item_dir}/brainstorm.md": "# B\\n"}}]}\n'
        '"*": {"*": [{verdict: {approved: true, summary: ok, issues: []}}]}\n'
    )
    again = phasegate(repo, "run", "s1", "--until", "brainstorm")
    assert again.returncode == 0, again.stderr
    assert "partial-phase" not in again.stdout + again.stderr
    assert _events(repo).count("node.started") == 1
