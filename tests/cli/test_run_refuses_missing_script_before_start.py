"""A scripted backend whose script is missing (or not set) can be found out without a call:
`run` refuses before anything starts (exit 2, one line), and leaves the item exactly as it
was, so the next run asks nothing about a half-done phase and `status` shows nothing begun."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from cli_process import run_cli
from phasegate.errors import ExitCode

NO_CLIS = {"PHASEGATE_AGENT_CLIS": "none"}


def _files(item: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(item.iterdir()) if p.is_file()}


def test_a_missing_script_stops_the_run_before_the_phase_starts(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert run_cli(repo, "init", env=NO_CLIS).returncode == 0
    assert run_cli(repo, "new", "s1", "-d", "x", env=NO_CLIS).returncode == 0
    item = repo / "docs" / "features" / "s1"
    before = _files(item)

    for _ in range(2):  # the second run is refused the same way: nothing was started
        ran = run_cli(repo, "run", "s1", env=NO_CLIS)
        assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
        assert "▶" not in ran.stdout + ran.stderr
        assert "partial-phase" not in ran.stdout + ran.stderr
        script = repo / ".phasegate" / "agents.yaml"
        assert ran.stderr.strip().splitlines() == [
            f"phasegate: error: executor: scripted backend: script {script} not found: "
            "write it (see docs/backends.md#without-a-model-scripted-and-auto), or set "
            "roles: {default: {backend: auto}} in .phasegate/config.yaml to walk the "
            "workflow with placeholder answers"
        ]
        assert _files(item) == before

    status = run_cli(repo, "status", "s1", env=NO_CLIS)
    assert "Phase: (not started)" in status.stdout
    assert "iteration 1" not in status.stdout


def test_without_a_config_the_run_says_to_init_before_starting(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert run_cli(repo, "new", "s1", "-d", "x", env=NO_CLIS).returncode == 0
    item = repo / "docs" / "features" / "s1"
    before = _files(item)
    ran = run_cli(repo, "run", "s1", env=NO_CLIS)
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert "▶" not in ran.stdout + ran.stderr
    [line] = ran.stderr.strip().splitlines()
    assert line.startswith("phasegate: error: executor: the scripted backend needs a script")
    assert line.endswith("run 'phasegate init')")
    assert _files(item) == before
