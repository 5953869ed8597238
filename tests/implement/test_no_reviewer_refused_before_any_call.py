"""A reviewed task whose implementer is the only agent of the repository can never be
reviewed (an implementer never reviews its own work): the run refuses it with the
task's line before any agent is called, not after the implementer's call."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli, make_repo
from test_implement_cli import ONE_TASK, SCRIPTED


def test_the_only_agent_is_refused_before_it_is_called(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", ONE_TASK, agents=("the-developer",), config=SCRIPTED)
    script = {"*": {"*": [{"write": {"src/sign.py": "import hmac\n"}, "text": "APPROVED"}]}}
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    result = cli(root, "implement", "006")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"phasegate: error: {PLAN}:5: task 'Sign outgoing payloads' has no reviewer: its "
        "implementer the-developer is the only agent here, and it never reviews its own "
        "work; add another agent (.claude/agents/NAME.md or a roles.NAME entry in "
        ".phasegate/config.yaml) or mark the task [`review: false`], then run again"
    )
    assert not (root / "src" / "sign.py").exists()
    assert "working on" not in result.stdout + result.stderr
