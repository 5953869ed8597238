"""A file named `.phasegate` where its folder belongs: `phasegate init` refuses it, so
`doctor` (and `run`) say it is not a folder and to move it away, not just to run init."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli

ADVICE = "is not a folder; move it away, then run 'phasegate init'"


def test_doctor_names_a_phasegate_file_and_what_works(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".phasegate").write_text("")
    refused = run_cli(root, "init")
    assert refused.returncode != 0 and "is not a folder" in refused.stderr
    result = run_cli(root, "doctor")
    assert result.returncode == 6, result.stderr
    header = next(line for line in result.stdout.splitlines() if line.startswith("Roles ("))
    assert f"{root / '.phasegate'} {ADVICE}" in header, header
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("phasegate: error: roles bound to a backend that cannot run here")
    assert f"{root / '.phasegate'} {ADVICE}" in error, error
    assert ": run 'phasegate init'" not in result.stdout + result.stderr
