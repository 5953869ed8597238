"""A repository with the review-loop example workflow and scripted agents, and its CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_process import run_cli as run_cli

#: The item the tests create.
ITEM = "demo"


def approving_agents(critic: str = "APPROVED", summary: str = "ok") -> dict[str, Any]:
    """Scripted agents that walk review-loop: a one-task plan, every review as given."""
    return {
        "planner": {"*": [{"write": {"{item_dir}/plan.md": "# Plan\n- [ ] a\n"}}]},
        "critic": {"*": [{"verdict": {"verdict": critic, "summary": summary, "issues": []}}]},
        "developer": {"*": [{"write": {"{item_dir}/reports/{task}.md": "ok\n"}}]},
        "reviewer": {"*": [{"verdict": {"approved": True, "summary": summary, "issues": []}}]},
    }


def review_loop_repo(path: Path, agents: dict[str, Any] | None = None) -> Path:
    """A git repository with review-loop, its scripted agents and the item ``demo``."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    for args in (("init", "--example", "review-loop"), ("new", ITEM, "--workflow", "review-loop")):
        done = run_cli(path, *args)
        assert done.returncode == 0, done.stderr
    script = path / ".phasegate" / "agents.yaml"
    script.write_text(json.dumps(agents or approving_agents()), encoding="utf-8")  # JSON is YAML
    return path
