"""`phasegate status` on a task whose agent call failed (every attempt) shows the task
`stopped` on that call, as the item's own line says `stopped`, not `interrupted` (which
is for a run killed or interrupted while its agent worked), and the loop item it was in
`failed` on that call; the next run resumes it. (Its implementer failing every attempt is
a decision for a person instead: test_agent_failure_decision.py; its reviewer failing
stops the run.)"""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import cli
from test_implement_cli import ONE_TASK, SIGN, scripted_repo


def test_a_task_whose_agent_call_failed_is_shown_stopped_on_it(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"fail": {"exit": 1, "error": "the model is overloaded"}}]},
    }
    root = scripted_repo(tmp_path, script, plan=ONE_TASK)
    failed = cli(root, "implement", "006")
    assert failed.returncode != 0 and "the model is overloaded" in failed.stderr, failed.stderr

    status = json.loads(cli(root, "status", "006", "--json").stdout)
    (row,) = status["tasks"]
    assert (row["key"], row["state"], row["was"], row["cycle"]) == (
        SIGN,
        "stopped",
        "in review",
        1,
    ), row
    assert row["failure"]["role"] == "the-security-engineer", row
    assert row["failure"]["error"] == "the model is overloaded", row
    assert status["nextCommand"] == "phasegate implement 006"
    shown = cli(root, "status", "006", env={"COLUMNS": "200"}).stdout
    assert "Phase: implementing, stopped:" in shown, shown
    said = (
        "stopped (in review, cycle 1/3, the-security-engineer): the-security-engineer failed "
        "after 2 attempts"
    )
    assert said in shown, shown
    assert "interrupted (in review" not in shown, shown
    # The phases loop's item the call was in says so too (not interrupted).
    assert "implementing items: 1 failed" in shown, shown
    assert "— failed: the-security-engineer failed in phases[" in shown, shown
    (phase,) = status["phases"][1]["items"]
    assert phase["status"] == "failed" and "the model is overloaded" in phase["reason"], phase

    script["*"] = {"*": [{"text": "APPROVED"}]}
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    resumed = cli(root, "implement", "006", "-q")
    assert resumed.returncode == 0, resumed.stderr
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert [r["state"] for r in rows] == ["done"]
