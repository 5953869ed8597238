"""`phasegate status` on a task whose agent call failed (every attempt) shows the task
`stopped` on that call, as the item's own line says `stopped`, not `interrupted` (which
is for a run killed or interrupted while its agent worked), and the loop item it was in
`failed` on that call; the next run resumes it."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import cli
from test_implement_cli import ONE_TASK, SIGN, scripted_repo


def test_a_task_whose_agent_call_failed_is_shown_stopped_on_it(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"fail": {"exit": 1, "error": "the model is overloaded"}}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script, plan=ONE_TASK)
    failed = cli(root, "implement", "006")
    assert failed.returncode != 0 and "the model is overloaded" in failed.stderr, failed.stderr

    status = json.loads(cli(root, "status", "006", "--json").stdout)
    (row,) = status["tasks"]
    assert (row["key"], row["state"], row["was"], row["cycle"]) == (
        SIGN,
        "stopped",
        "implementing",
        1,
    ), row
    assert row["failure"]["role"] == "the-developer", row
    assert row["failure"]["error"] == "the model is overloaded", row
    assert status["nextCommand"] == "phasegate implement 006"
    shown = cli(root, "status", "006", env={"COLUMNS": "200"}).stdout
    assert "Phase: implementing, stopped:" in shown, shown
    said = "stopped (implementing, cycle 1/3): the-developer failed after 2 attempts"
    assert said in shown, shown
    assert "interrupted (implementing" not in shown, shown
    # The phases loop's item the call was in says so too (not interrupted).
    assert "implementing items: 1 failed" in shown, shown
    assert "— failed: the-developer failed in phases[" in shown, shown
    (phase,) = status["phases"][1]["items"]
    assert phase["status"] == "failed" and "the model is overloaded" in phase["reason"], phase

    script["the-developer"] = {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]}
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    resumed = cli(root, "implement", "006", "-q")
    assert resumed.returncode == 0, resumed.stderr
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert [r["state"] for r in rows] == ["done"]
