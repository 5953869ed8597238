"""A wrong value in a scripted agent's script is the person's to fix: the run stops at once
with exit 2 (bad input) naming the file and the entry, instead of retrying the call and
ending as an agent failure (exit 6); once fixed, the next run goes on."""

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
        env={**os.environ, "PHASEGATE_AGENT_CLIS": ""},
    )


def test_a_typo_in_a_scripted_reply_stops_the_run_as_bad_input(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init").returncode == 0
    agents = repo / ".phasegate" / "agents.yaml"
    agents.write_text("executor: {brainstorm: [{wirte: {a: b}}]}\n")
    assert phasegate(repo, "new", "s1", "-d", "x").returncode == 0
    ran = phasegate(repo, "run", "s1", "--until", "brainstorm")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert line == (
        f"phasegate: error: executor (scripted): {agents}: executor.brainstorm[1]: "
        "unknown key(s) wirte in scripted reply"
    )
    journal = (repo / "docs" / "features" / "s1" / ".journal.jsonl").read_text().splitlines()
    failed = [e for e in map(json.loads, journal) if e["event"] == "agent.failed"]
    assert len(failed) == 1  # not retried
    agents.write_text(
        'executor: {brainstorm: [{write: {"{item_dir}/brainstorm.md": "# B\\n"}}]}\n'
        '"*": {"*": [{verdict: {approved: true, summary: ok, issues: []}}]}\n'
    )
    again = phasegate(repo, "run", "s1", "--until", "brainstorm")
    assert again.returncode == 0, again.stderr
