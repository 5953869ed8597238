"""The phasegate CLI run as a script runs it: its own process, no terminal, stdin closed;
and in this process, for tests that read what it prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(
    root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``phasegate *args`` in ``root`` (``env`` added to this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def cli_in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The real CLI, in this process: exit code, stdout, stderr."""
    from phasegate.cli import main

    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
