"""`phasegate init --test-command`: an explicit empty value means the project has no test
command (nothing detected is written), and on a repository already set up the option is
said not to have been applied rather than dropped in silence."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli
from phasegate.config import load_config


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "pyproject.toml").write_text("[project]\nname = 'x'\n", "utf-8")  # pytest evident
    return path


def test_empty_test_command_writes_none(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    ran = run_cli(root, "init", "--test-command", "", env={"PHASEGATE_AGENT_CLIS": "none"})
    assert ran.returncode == 0, ran.stderr
    assert load_config(root).commands == {}
    assert "  # test: python -m pytest -q" in (root / ".phasegate" / "config.yaml").read_text()


def test_detected_without_the_option(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    assert run_cli(root, "init", env={"PHASEGATE_AGENT_CLIS": "none"}).returncode == 0
    assert load_config(root).commands == {"test": "python -m pytest -q"}


def test_existing_config_says_test_command_not_applied(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    assert run_cli(root, "init", env={"PHASEGATE_AGENT_CLIS": "none"}).returncode == 0
    before = (root / ".phasegate" / "config.yaml").read_text()
    again = run_cli(root, "init", "--test-command", "make check")
    assert again.returncode == 0, again.stderr
    assert "already exists; left unchanged" in again.stdout
    assert "--test-command was not applied: set commands.test in " in again.stdout
    assert (root / ".phasegate" / "config.yaml").read_text() == before
