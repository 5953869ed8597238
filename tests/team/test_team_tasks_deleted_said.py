"""A Coder that deletes tasks.yaml during its call has it put back, and the failed call
says the file was deleted (not "made unreadable")."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_helpers import LIMIT_OK, SESSION, in_process, run_through, team_script

from phasegate.errors import AgentError


def test_a_deleted_tasks_yaml_is_put_back_and_said_deleted(tmp_path: Path) -> None:
    script = team_script()
    script["coder"]["code:T1"] = [
        {"write": {"src/limit.py": LIMIT_OK}, "delete": ["{item_dir}/tasks.yaml"], "text": "x"}
    ]
    repo, agents = in_process(tmp_path / "repo", script)
    with pytest.raises(AgentError) as failed:
        run_through(repo, agents, UD_APPROVE_DESIGN="approved", UD_REVIEW_STRATEGY="per-batch")
    assert (
        "coder changed the tasks' acceptance checks (.agents-work/login/tasks.yaml: deleted)"
        in str(failed.value)
    )
    assert "T1" in (tmp_path / "repo" / SESSION / "tasks.yaml").read_text()
