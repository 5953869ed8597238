"""An agent call that ran out of time, with no attempt left, stops the run (exit 6) with
one line that names the setting giving it longer: the role's `timeout` when the config
sets one (its own binding, or `roles.default`'s), else `timeouts.agent`. A new user whose
agent needs more time is not left to guess which of them the limit came from."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - id: draft
    executor: writer
    prompt: draft.md
    on: {pass: done}
  - id: done
    kind: end
"""

AGENTS = """\
writer:
  "*": [{sleep: 30, write: {"notes.txt": "notes\\n"}}]
"""


def run_slow_writer(root: Path, roles: str, timeouts: str) -> str:
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "wf").mkdir(parents=True)
    (folder / "wf.yaml").write_text(WORKFLOW)
    (folder / "prompts" / "wf" / "draft.md").write_text("Write notes.txt.\n")
    (root / ".phasegate" / "config.yaml").write_text(
        f"version: 1\nroles:\n{roles}backends:\n  scripted: {{script: .phasegate/agents.yaml}}\n"
        f"retries: {{agent: 0}}\n{timeouts}"
    )
    (root / ".phasegate" / "agents.yaml").write_text(AGENTS)
    made = run_cli(root, "new", "one", "--workflow", "wf", "--description", "x")
    assert made.returncode == 0, made.stdout + made.stderr
    ran = run_cli(root, "run", "one", "-q")
    assert ran.returncode == ExitCode.AGENT, ran.stdout + ran.stderr
    return ran.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("roles", "timeouts", "setting"),
    [
        (
            "  default: {backend: scripted}\n  writer: {backend: scripted, timeout: 1}\n",
            "",
            "roles.writer.timeout",
        ),
        ("  default: {backend: scripted, timeout: 1}\n", "", "roles.default.timeout"),
        ("  default: {backend: scripted}\n", "timeouts: {agent: 1}\n", "timeouts.agent"),
    ],
    ids=["role", "default-role", "timeouts-agent"],
)
def test_the_error_names_the_setting_to_raise(
    tmp_path: Path, roles: str, timeouts: str, setting: str
) -> None:
    said = run_slow_writer(tmp_path / "repo", roles, timeouts)
    assert said == (
        "phasegate: error: writer (scripted) failed in phase draft after 1 attempt: scripted "
        "agent did not finish within 1s; to give it longer, raise "
        f"{setting} in .phasegate/config.yaml"
    ), said
