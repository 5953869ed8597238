"""A failed agent call's progress line says how long it took before the error, so the time
is never read as part of the error's sentence ("...put back as they were in 0.0s")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli
from phasegate.errors import ExitCode


def test_the_error_of_a_failed_call_ends_its_progress_line(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {"PHASEGATE_AGENT_CLIS": "none"}
    assert run_cli(tmp_path, "init", env=env).returncode == 0
    (tmp_path / ".phasegate" / "agents.yaml").write_text(
        'executor:\n  "*": [{fail: {error: the model is overloaded, exit: 3}}]\n',
        encoding="utf-8",
    )
    assert run_cli(tmp_path, "new", "a", "-d", "x", env=env).returncode == 0
    ran = run_cli(tmp_path, "run", "a", env={**env, "NO_COLOR": "1"})
    assert ran.returncode == ExitCode.AGENT, ran.stderr
    failed = [line for line in ran.stderr.splitlines() if "executor failed in " in line]
    assert len(failed) == 2, ran.stderr  # the call and its retry
    for line in failed:
        assert line.strip().startswith("executor failed in "), line
        assert line.endswith("tokens): the model is overloaded"), line
