"""A scripted reply's `mcp` tool calls are checked like its other keys: a wrong entry stops
the run with exit 2 (bad input), one line naming the script, the entry and the key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from phasegate.errors import ExitCode


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "PHASEGATE_AGENT_CLIS": ""},
    )


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            "mcp: create_review",
            "mcp must be a list of tool calls ({server, tool, arguments}), "
            "not text 'create_review'",
        ),
        (
            "mcp: [{server: phasegate}]",
            "mcp[0]: tool is missing (the name of the MCP tool to call)",
        ),
        ("mcp: [{tool: t, args: {}}]", "mcp[0]: unknown key(s) args (use server, tool, arguments)"),
        ("mcp: [{tool: t, arguments: [1]}]", "mcp[0]: arguments must be a mapping, not a list [1]"),
    ],
)
def test_a_wrong_mcp_entry_stops_the_run_as_bad_input(
    tmp_path: Path, entry: str, problem: str
) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init").returncode == 0
    agents = repo / ".phasegate" / "agents.yaml"
    agents.write_text(f"executor: {{brainstorm: [{{{entry}}}]}}\n")
    assert phasegate(repo, "new", "s1", "-d", "x").returncode == 0
    ran = phasegate(repo, "run", "s1", "--until", "brainstorm")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert (
        line
        == f"phasegate: error: executor (scripted): {agents}: executor.brainstorm[1]: {problem}"
    )
