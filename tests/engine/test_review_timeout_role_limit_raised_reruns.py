"""A review with ``on_timeout`` and no ``timeout`` of its own runs in its role's limit
(``roles.ROLE.timeout``, else ``timeouts.agent``). A run killed just after that review
timed out reuses the timed-out result when resumed, unless that limit was raised since:
then the review is asked again, in the time it has now (as when the reviewer's own
``timeout`` was raised)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli

WORKFLOW = """\
name: rt
modes: {standard: {max_iterations: 2}}
roles:
  writer: {access: write}
  checker: {access: read-only}
nodes:
  - id: write
    executor: writer
    outputs: [notes.md]
    reviewers:
      - role: checker
        on: {APPROVED: pass, REJECTED: revise, UNCLEAR: revise}
        on_timeout: late
    on: {late: slow}
  - {id: done, kind: end}
  - {id: slow, kind: end, label: slow, status: stopped, message: The review ran out of time.}
"""

SCRIPT = {
    "writer": {"*": [{"write": {"{item_dir}/notes.md": "# Notes\n"}}]},
    "checker": {"*": [{"sleep": 2, "verdict": {"approved": True, "summary": "ok", "issues": []}}]},
}

#: The review's limit, set for its role or for every agent (seconds).
ROLE = "roles:\n  default: {{backend: scripted}}\n  checker: {{backend: scripted, timeout: {}}}\n"
DEFAULT = "roles:\n  default: {{backend: scripted}}\ntimeouts: {{agent: {}}}\n"


def _killed_after_the_timed_out_review(tmp_path: Path, limits: str) -> Path:
    repo = tmp_path / "repo"
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "rt").mkdir(parents=True)
    (folder / "prompts" / "rt" / "write.md").write_text("Write notes for {{ item }}\n")
    (folder / "prompts" / "rt" / "checker.md").write_text("Review the notes of {{ item }}\n")
    (folder / "rt.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text(json.dumps(SCRIPT))
    _limit(repo, limits.format(0.5))
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    assert run_cli(repo, "new", "r1", "-w", "rt", "-d", "x").returncode == 0
    # The writer's call returns first, the review's (timed out) second: killed there.
    killed = run_cli(repo, "run", "r1", env={"PHASEGATE_CRASH_AT": "agent.returned@2"})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    return repo


def _limit(repo: Path, limits: str) -> None:
    (repo / ".phasegate" / "config.yaml").write_text(
        limits + "backends:\n  scripted: {script: .phasegate/agents.yaml}\n"
    )


@pytest.mark.parametrize("limits", [ROLE, DEFAULT], ids=["role", "default"])
@pytest.mark.parametrize(("seconds", "reviewed"), [(30, True), (0.5, False)])
def test_a_raised_role_or_default_limit_asks_the_timed_out_review_again(
    tmp_path: Path, limits: str, seconds: float, reviewed: bool
) -> None:
    repo = _killed_after_the_timed_out_review(tmp_path, limits)
    _limit(repo, limits.format(seconds))
    done = run_cli(repo, "run", "r1")
    assert done.returncode == 0, done.stdout + done.stderr
    status = json.loads(run_cli(repo, "status", "r1", "--json").stdout)
    if reviewed:  # asked again in the raised limit: approved
        assert status["status"] == "completed" and status["endMessage"] is None, status
    else:  # the same limit: the recorded timeout is the review's result
        assert status["label"] == "slow", status
        assert status["endMessage"] == "The review ran out of time.", status
