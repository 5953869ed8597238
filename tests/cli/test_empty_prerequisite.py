"""A hard prerequisite is met by an artifact with content, not by a file merely existing:
an empty spec.md blocks implement as no spec.md does (seed 000 interface 1), and the
message names the command that makes it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from cli_process import run_cli
from phasegate.errors import ExitCode


def setup(root: Path) -> Path:
    repo = init_repo(root)
    assert run_cli(repo, "init").returncode == 0
    assert run_cli(repo, "new", "x", "-w", "feature").returncode == 0
    return repo


def test_an_empty_spec_does_not_let_implement_start(tmp_path: Path) -> None:
    repo = setup(tmp_path / "repo")
    (repo / "docs/features/x/spec.md").write_text("  \n\n")
    ran = run_cli(repo, "run", "x", "--phase", "implement", "--yes")
    assert ran.returncode == ExitCode.BLOCKED, ran.stdout + ran.stderr
    assert (
        "cannot start implement: spec.md is missing or empty (hard prerequisite); run the "
        "specify phase first: phasegate run x --phase specify"
    ) in ran.stderr
    assert "node.started" not in (repo / "docs/features/x/.journal.jsonl").read_text()


def test_a_spec_with_content_lets_implement_start(tmp_path: Path) -> None:
    repo = setup(tmp_path / "repo")
    (repo / "docs/features/x/spec.md").write_text("# Spec\n\n- R1\n")
    (repo / ".phasegate/agents.yaml").write_text(
        'executor: {"*": [{write: {"app.py": "x = 1\\n"}}]}\n'
        '"*": {"*": [{verdict: {approved: true, summary: ok, issues: []}}]}\n'
    )
    ran = run_cli(repo, "run", "x", "--phase", "implement", "--yes")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "implement complete" in ran.stdout + ran.stderr
