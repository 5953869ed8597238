"""A ``.phasegate/config.yaml`` saved in another encoding than UTF-8 (an editor's Latin-1)
is said to be so, with the line of the first byte that is not UTF-8, not as invalid YAML."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli


def test_a_config_not_in_utf8_names_the_encoding_and_the_line(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_bytes(b"roles:\n  default: {backend: auto}\n# caf\xe9 au lait\n")
    done = run_cli(tmp_path, "status")
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip() == (
        f"phasegate: error: {config}:3: not UTF-8 text (byte 0xe9); save it as UTF-8"
    )
