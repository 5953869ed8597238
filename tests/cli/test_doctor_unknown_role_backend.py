"""``roles.ROLE.backend`` naming a backend that is not installed (a typo such as ``clade``)
is a config error: ``doctor`` exits 2 naming the file and the key, as ``run`` does, not 6
as for an installed backend that cannot run here."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli


def test_doctor_names_an_unknown_role_backend_as_a_config_error(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text(
        "roles:\n  default: {backend: auto}\n  executor: {backend: clade}\n", encoding="utf-8"
    )
    doctor = run_cli(tmp_path, "doctor")
    assert doctor.returncode == 2, doctor.stderr
    error = doctor.stderr.strip().splitlines()[-1]
    assert error.startswith(
        f"phasegate: error: {config}: roles.executor.backend: unknown backend 'clade'"
    )
    made = run_cli(tmp_path, "new", "rate-limit", "--description", "x")
    assert made.returncode == 0, made.stderr
    run = run_cli(tmp_path, "run", "rate-limit", "--yes")
    assert run.returncode == 2  # the same code for the same config
    assert run.stderr.strip().splitlines()[-1] == error
