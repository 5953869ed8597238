"""A repository where `phasegate init` was never run: `run` and `doctor` say to run it,
rather than pointing only at a `.phasegate/config.yaml` that does not exist."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_run_without_config_names_init(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    created = run_cli(root, "new", "foo", "--description", "try it")
    assert created.returncode == 0, created.stderr
    assert "Next: phasegate init (this repository has no .phasegate/config.yaml), then " in (
        created.stdout
    )
    result = run_cli(root, "run", "foo")
    assert result.returncode == 2, result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("phasegate: error: executor: ")
    assert "run 'phasegate init'" in error
    assert str(root / ".phasegate" / "config.yaml") in error


def test_doctor_without_config_names_init(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    (root / "docs" / "features").mkdir(parents=True)
    run_cli(root, "new", "foo", "--description", "try it")
    result = run_cli(root, "doctor")
    assert result.returncode == 6, result.stderr
    header = next(line for line in result.stdout.splitlines() if line.startswith("Roles ("))
    assert "there is no" in header and "run 'phasegate init'" in header
    assert "run 'phasegate init'" in result.stderr


def test_config_written_by_init_gets_no_init_advice(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    assert run_cli(root, "init", env={"PHASEGATE_AGENT_CLIS": "none"}).returncode == 0
    created = run_cli(root, "new", "foo", "--description", "try it")
    assert "Next: phasegate run foo" in created.stdout
    result = run_cli(root, "run", "foo")
    assert result.returncode == 2, result.stderr
    assert "phasegate init" not in result.stderr
    assert "agents.yaml not found" in result.stderr
