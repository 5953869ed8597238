"""The `auto` backend refuses a setting it does not know (a typo in a role's binding or
under backends.auto), as every other backend does, instead of ignoring it: exit 2 before
anything runs, one line naming the key, the likely meant one and the config file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli


def _repo(root: Path, roles: str, backends: str = "") -> Path:
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e.invalid",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
        cwd=root,
        check=True,
    )
    assert run_cli(root, "init").returncode == 0
    (root / ".phasegate" / "config.yaml").write_text(
        f"version: 1\nroles:\n  default: {roles}\n{backends}"
    )
    assert run_cli(root, "new", "f1", "--workflow", "feature").returncode == 0
    return root


@pytest.mark.parametrize(
    ("roles", "backends"),
    [
        ("{backend: auto, modle: x}", ""),
        ("{backend: auto}", "backends:\n  auto: {modle: x}\n"),
    ],
)
def test_a_typo_in_the_auto_backends_settings_is_refused(
    tmp_path: Path, roles: str, backends: str
) -> None:
    root = _repo(tmp_path / "repo", roles, backends)
    ran = run_cli(root, "run", "f1", "--until", "brainstorm")
    assert ran.returncode == 2, ran.stderr
    line = ran.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "backend 'auto'" in line and "modle: unknown setting" in line, line
    assert "did you mean 'model'?" in line and ".phasegate/config.yaml" in line, line


def test_the_auto_backend_with_a_model_runs(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", "{backend: auto, model: any}")
    ran = run_cli(root, "run", "f1", "--until", "brainstorm")
    assert ran.returncode == 0, ran.stderr
