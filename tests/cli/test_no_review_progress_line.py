"""`run --no-review`: the progress lines say no review happened (as `status` shows `-`
under iterations), instead of promising review iterations and counting one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from cli_process import run_cli

NO_CLIS = {"PHASEGATE_AGENT_CLIS": "none"}


def test_a_phase_run_without_review_says_so(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert run_cli(repo, "init", env=NO_CLIS).returncode == 0
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text().replace("backend: scripted", "backend: auto"))
    assert run_cli(repo, "new", "s1", "-d", "x", env=NO_CLIS).returncode == 0

    ran = run_cli(repo, "run", "s1", "--no-review", "--until", "brainstorm", env=NO_CLIS)
    assert ran.returncode == 0, ran.stderr
    lines = [line.rstrip() for line in ran.stderr.splitlines()]
    assert "▶ brainstorm (mode standard, review skipped)" in lines, lines
    assert "✔ brainstorm complete (no review)" in lines, lines
    assert not any("1 iteration" in line for line in lines), lines

    status = run_cli(repo, "status", "s1", env=NO_CLIS)
    row = next(line for line in status.stdout.splitlines() if line.split()[1:2] == ["brainstorm"])
    assert row.split()[:4] == ["✔", "brainstorm", "-", "skipped"]
