"""A timeout in the config written with a unit (``10m``, ``90s``) is refused with one line
saying the value is a number of seconds, written without a unit (exit code 2)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli


@pytest.mark.parametrize(
    ("config", "field", "value"),
    [
        ("timeouts: {agent: 10m}\n", "timeouts.agent", "10m"),
        ("timeouts: {check: 90s}\n", "timeouts.check", "90s"),
        (
            "roles:\n  default: {backend: scripted, timeout: 5 minutes}\n",
            "roles.default.timeout",
            "5 minutes",
        ),
    ],
)
def test_a_timeout_with_a_unit_says_it_is_seconds(
    tmp_path: Path, config: str, field: str, value: str
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".phasegate").mkdir()
    (tmp_path / ".phasegate" / "config.yaml").write_text("version: 1\n" + config)
    shown = run_cli(tmp_path, "status")
    assert shown.returncode == 2, shown.stdout + shown.stderr
    (line,) = shown.stderr.strip().splitlines()
    assert line.endswith(
        f"config.yaml: {field}: must be a number of seconds, without a unit: 600, not 10m "
        f"(got {value!r})"
    ), line
