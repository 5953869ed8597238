"""`phasegate validate .phasegate/config.yaml`: the config is not a workflow, and is said
to be one line naming what checks it, not ten "unknown field" problems of a workflow."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli


def test_validate_names_doctor_for_the_config(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert run_cli(root, "init", env={"PHASEGATE_AGENT_CLIS": "none"}).returncode == 0
    result = run_cli(root, "validate", ".phasegate/config.yaml")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "phasegate: error: .phasegate/config.yaml: this is phasegate's config, not a "
        "workflow: 'phasegate doctor' checks it (workflows are NAME.yaml files in "
        ".phasegate/workflows/)"
    ]
    doctor = run_cli(root, "doctor")
    assert "Traceback" not in doctor.stderr
