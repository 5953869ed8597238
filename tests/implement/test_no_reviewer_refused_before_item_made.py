"""A reviewed task whose implementer is the only agent of the repository can never be
reviewed: `phasegate implement` refuses it before the work item is made, as it does any
other error in PLAN.md, so the refusal leaves no item behind (one the user would have to
find and delete, or that a later `implement` would resume with the plan's error still in
it). `phasegate new --workflow implement --plan` refuses it the same way."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli, make_repo
from test_implement_cli import ONE_TASK, SCRIPTED

REFUSAL = (
    f"phasegate: error: {PLAN}:5: task 'Sign outgoing payloads' has no reviewer: its "
    "implementer the-developer is the only agent here, and it never reviews its own "
    "work; add another agent (.claude/agents/NAME.md or a roles.NAME entry in "
    ".phasegate/config.yaml) or mark the task [`review: false`], then run again"
)


def one_agent_repo(root: Path) -> Path:
    make_repo(root, ONE_TASK, agents=("the-developer",), config=SCRIPTED)
    script = {"*": {"*": [{"write": {"src/sign.py": "import hmac\n"}, "text": "APPROVED"}]}}
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    return root


def items(root: Path) -> str:
    listed = cli(root, "status", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    return listed.stdout


def test_implement_makes_no_item(tmp_path: Path) -> None:
    root = one_agent_repo(tmp_path / "repo")
    before = items(root)
    result = cli(root, "implement", "006")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == REFUSAL
    assert "Created" not in result.stdout, result.stdout
    assert items(root) == before


def test_new_makes_no_item(tmp_path: Path) -> None:
    root = one_agent_repo(tmp_path / "repo")
    before = items(root)
    result = cli(root, "new", "sign", "--workflow", "implement", "--plan", PLAN)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == REFUSAL
    assert items(root) == before
