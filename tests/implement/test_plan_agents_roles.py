"""A ``roles.NAME`` entry of ``.phasegate/config.yaml`` is an agent of the implement
workflow, whatever other workflows call their roles; only the implement workflow's own
roles (``implementer``, ``reviewer``) and ``default`` are bindings, not agents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, cli, make_repo

ONE_TASK = """# Plan

## Phase 1: X

- [ ] **One task** [`agent: the-developer`]
"""


def roles_repo(
    tmp_path: Path, roles: dict[str, Any], plan: str = ONE_TASK, implementer: str = "the-developer"
) -> Path:
    config = {
        "roles": {"default": {"backend": "scripted"}, **roles},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
    }
    root = make_repo(tmp_path / "repo", plan, agents=("the-developer",), config=config)
    script = {
        implementer: {"implement": [{"write": {"src/a.py": "x = 1\n"}, "text": "done"}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    return root


def test_a_config_role_named_like_another_workflows_role_reviews(tmp_path: Path) -> None:
    """The only agent cannot review itself; following the advice with ``roles.qa`` (a
    role of the team workflow by that name) gives the task a reviewer."""
    root = roles_repo(tmp_path, {"qa": {"backend": "scripted"}})
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 0, result.stderr
    assert "- [x] **One task**" in (root / PLAN).read_text()
    journal = (root / ".phasegate" / "implement" / "006" / ".journal.jsonl").read_text()
    chosen = [
        json.loads(line)
        for line in journal.splitlines()
        if json.loads(line).get("event") == "reviewer.selected"
    ]
    assert [c.get("role") for c in chosen] == ["qa"]


def test_a_task_may_name_a_config_role_named_like_another_workflows_role(
    tmp_path: Path,
) -> None:
    """``[`agent: qa`]`` with ``roles.qa`` in the config implements the task."""
    plan = ONE_TASK.replace("agent: the-developer", "agent: qa")
    root = roles_repo(tmp_path, {"qa": {"backend": "scripted"}}, plan, implementer="qa")
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 0, result.stderr
    assert "- [x] **One task**" in (root / PLAN).read_text()


def test_a_task_naming_a_role_of_the_implement_workflow_is_told_why(tmp_path: Path) -> None:
    """``roles.reviewer`` binds the reviewers' role: a task naming ``reviewer`` is refused
    with one line saying so and what to name instead."""
    plan = ONE_TASK.replace("agent: the-developer", "agent: reviewer")
    root = roles_repo(tmp_path, {"reviewer": {"backend": "scripted"}}, plan)
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{PLAN}:5:20: task 'One task' names agent 'reviewer'" in lines[0]
    assert "roles.reviewer" in lines[0] and "not an agent" in lines[0]
