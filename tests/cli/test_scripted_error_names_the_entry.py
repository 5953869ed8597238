"""A wrong reply in a scripted agent's script is named where the script has it: the role
and key that matched (``"*"`` when that is what matched) and the reply's number in its
list, not the phase and iteration of the call, which the script may not spell at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli
from phasegate.errors import ExitCode


def test_a_bad_reply_under_a_star_key_is_named_by_that_key(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {"PHASEGATE_AGENT_CLIS": "none"}
    assert run_cli(tmp_path, "init", env=env).returncode == 0
    agents = tmp_path / ".phasegate" / "agents.yaml"
    agents.write_text('executor:\n  "*": [{fail: true}]\n', encoding="utf-8")
    assert run_cli(tmp_path, "new", "a", "-d", "x", env=env).returncode == 0
    ran = run_cli(tmp_path, "run", "a", env=env)
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert line == (
        f"phasegate: error: executor (scripted): {agents}: executor.*[1]: "
        "fail must be text, not bool True"
    )


def test_a_bad_later_reply_is_named_by_its_number(tmp_path: Path) -> None:
    """The second reply of a list, used by the second review iteration, is reply 2."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {"PHASEGATE_AGENT_CLIS": "none"}
    assert run_cli(tmp_path, "init", env=env).returncode == 0
    agents = tmp_path / ".phasegate" / "agents.yaml"
    agents.write_text(
        'executor:\n  brainstorm:\n    - write: {"{item_dir}/brainstorm.md": "# B\\n"}\n'
        "    - {sleep: forever}\n"
        "chain-reviewer:\n"
        "  brainstorm:\n"
        "    - verdict: {approved: false, summary: no, issues: "
        "[{severity: blocker, description: thin, location: null}]}\n",
        encoding="utf-8",
    )
    assert run_cli(tmp_path, "new", "a", "-d", "x", env=env).returncode == 0
    ran = run_cli(tmp_path, "run", "a", env=env)
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert f"{agents}: executor.brainstorm[2]: sleep must be a number" in line, line
