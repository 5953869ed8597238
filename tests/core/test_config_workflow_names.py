"""A ``workflows.NAME`` section naming no workflow (a typo such as ``reveiw-loop``) is
refused wherever the config is checked against the workflows: its budget would cap
nothing. ``run``, ``new`` and ``doctor`` stop with exit code 2 and one line naming the
key and the workflows there are; a run spends nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_process import run_cli as _cli
from phasegate.workflow.example_files import copy_example

CONFIG = """\
version: 1
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
workflows:
  reveiw-loop:
    budget: {item: {usd: 0.5}}
"""

#: Every call of every role answers (and costs) the same; the critic and reviewer approve.
AGENTS = {
    "planner": {
        "plan": [
            {
                "write": {"{item_dir}/plan.md": "# Plan\n\n## Tasks\n\n- [ ] T1 Add the limiter\n"},
                "cost_usd": 0.4,
            }
        ]
    },
    "critic": {
        "plan": [
            {
                "verdict": {"verdict": "APPROVED", "summary": "ok", "issues": []},
                "cost_usd": 0.4,
            }
        ]
    },
}


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def _repo(root: Path, config: str) -> Path:
    root.mkdir()
    (root / "README.md").write_text("# sample\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    copy_example("review-loop", root)
    (root / ".phasegate" / "config.yaml").write_text(config)
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(AGENTS))
    return root


def _refused(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if "workflows.reveiw-loop" in line]
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert ".phasegate/config.yaml" in line
    # The workflows there are: built-in and the repository's own.
    for name in ("feature", "change", "team", "implement", "review-loop"):
        assert name in line.split("workflows.reveiw-loop", 1)[1], line


def test_run_refuses_a_budget_under_a_misspelled_workflow_before_any_call(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path / "repo", CONFIG.replace("  reveiw-loop:", "  review-loop:"))
    made = _cli(root, "new", "limits", "--workflow", "review-loop")
    assert made.returncode == 0, made.stderr
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    _refused(_cli(root, "run", "limits"))
    journal = next(root.rglob(".journal.jsonl"))
    assert "agent.dispatched" not in journal.read_text()
    # With the name right, the same budget caps the run: it stops at the budget decision.
    (root / ".phasegate" / "config.yaml").write_text(
        CONFIG.replace("  reveiw-loop:", "  review-loop:")
    )
    capped = _cli(root, "run", "limits")
    assert capped.returncode == 3, (capped.stdout, capped.stderr)
    assert "budget" in capped.stdout + capped.stderr


def test_new_and_doctor_refuse_it_too(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", CONFIG)
    _refused(_cli(root, "new", "limits", "--workflow", "review-loop"))
    assert not (root / "work" / "limits").exists()
    _refused(_cli(root, "doctor"))


def test_a_workflow_of_the_repository_is_a_known_name(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", CONFIG.replace("  reveiw-loop:", "  review-loop:"))
    assert _cli(root, "doctor").returncode == 0
    assert _cli(root, "new", "limits", "--workflow", "review-loop").returncode == 0
