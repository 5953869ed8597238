"""The shipped ``review-loop`` example in a real repository, with scripted agents.

The example (``phasegate init --example review-loop``): the planner writes
plan.md, the critic answers APPROVED / NEEDS_REVISION / REJECTED, a rejected
plan waits at the gate ``plan-rejected`` (revise / implement / drop), then each
task of plan.md is implemented by the developer and reviewed by the reviewer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine_helpers import init_repo
from ruamel.yaml import YAML

from phasegate.api import open_repo
from phasegate.workflow.example_files import copy_example

WORKFLOW = "review-loop"
ITEM = "limits"
FOLDER = Path("work") / ITEM
DECISION = "plan-rejected"
PLAN_V1 = (
    "# Plan\n\nCount requests per client.\n\n## Tasks\n\n"
    "- [ ] T1 Add the limiter\n- [ ] T2 Return 429 when over the limit\n"
)
PLAN_V2 = PLAN_V1.replace("per client", "per API key")


def words(verdict: str, *issues: str, severity: str = "high") -> dict[str, Any]:
    """A critic's answer for the ``words`` reader."""
    found = [{"severity": severity, "description": text, "location": "plan.md"} for text in issues]
    return {"verdict": {"verdict": verdict, "summary": verdict.lower(), "issues": found}}


def approval(approved: bool, *blockers: str) -> dict[str, Any]:
    """A task reviewer's answer for the ``approval`` reader."""
    found = [{"severity": "blocker", "description": text, "location": None} for text in blockers]
    return {"verdict": {"approved": approved, "summary": "reviewed", "issues": found}}


def task_work(task: str, version: int) -> dict[str, Any]:
    """The developer's reply for ``task``: code, and the report the node declares."""
    return {
        "write": {
            f"src/{task.lower()}.py": f"VERSION = {version}\n",
            "{item_dir}/reports/{task}.md": f"# {task}\n\nVersion {version}.\n",
        },
        "text": f"{task} v{version}",
    }


def script(
    critic: list[dict[str, Any]],
    reviews: dict[str, list[dict[str, Any]]] | None = None,
    sleep: float = 0.0,
) -> dict[str, Any]:
    """Agents for the example: the planner writes plan v1 then v2, the critic answers
    ``critic`` round by round, the developer writes each task's code (a new version
    each round) and the reviewer answers ``reviews[task]`` (approving by default)."""
    reviews = reviews or {}
    found: dict[str, Any] = {
        "planner": {
            "plan": [
                {"write": {"{item_dir}/plan.md": PLAN_V1}, "text": "plan v1"},
                {"write": {"{item_dir}/plan.md": PLAN_V2}, "text": "plan v2"},
            ]
        },
        "critic": {"plan": critic},
        "developer": {
            f"implement:{task}": [task_work(task, 1), task_work(task, 2)] for task in ("T1", "T2")
        },
        "reviewer": {
            f"implement:{task}": reviews.get(task, [approval(True)]) for task in ("T1", "T2")
        },
    }
    if sleep:
        for by_node in found.values():
            for replies in by_node.values():
                for reply in replies:
                    reply["sleep"] = sleep
    return found


def write_yaml(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        YAML(typ="safe", pure=True).dump(data, handle)


def make_repo(root: Path, agents: dict[str, Any] | None, backend: str = "scripted") -> Path:
    """A git repository with the example copied in, its agents, and the item created.

    ``agents`` is the scripted backend's script (``None`` with ``backend: auto``);
    every call the scripted backend receives is logged to ``.phasegate/calls.jsonl``.
    """
    repo = init_repo(root)
    copy_example(WORKFLOW, repo)
    config: dict[str, Any] = {"roles": {"default": {"backend": backend}}}
    if agents is not None:
        config["backends"] = {
            "scripted": {"script": ".phasegate/agents.yaml", "calls_log": ".phasegate/calls.jsonl"}
        }
        write_yaml(repo / ".phasegate" / "agents.yaml", agents)
    write_yaml(repo / ".phasegate" / "config.yaml", config)
    open_repo(repo).new(ITEM, workflow=WORKFLOW, description="Add rate limiting")
    return repo
