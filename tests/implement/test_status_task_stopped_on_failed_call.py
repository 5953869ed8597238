"""`phasegate status` on a task whose agent call failed (every attempt) shows the task
`stopped` on that call, as the item's own line says `stopped`, not `interrupted` (which
is for a run killed or interrupted while its agent worked), and the loop item it was in
`failed` on that call; the next run resumes it. (Its implementer failing every attempt is
a decision for a person instead: test_agent_failure_decision.py; so is its reviewer
failing every attempt: test_reviewer_failure_and_blocked_decisions.py. A reviewer's
failure is shown here as that decision, never ``stopped`` nor ``interrupted``.)"""

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
    said = failed.stdout + failed.stderr
    assert failed.returncode == 3 and "the model is overloaded" in said, said

    status = json.loads(cli(root, "status", "006", "--json").stdout)
    (row,) = status["tasks"]
    assert (row["key"], row["state"], row["decision"]) == (
        SIGN,
        "review failed",
        f"review-failed-{SIGN}",
    ), row
    assert "the-security-engineer" in row["question"], row
    assert "the model is overloaded" in row["question"], row
    shown = cli(root, "status", "006", env={"COLUMNS": "200"}).stdout
    assert "stopped (in review" not in shown, shown
    assert "interrupted (in review" not in shown, shown

    script["*"] = {"*": [{"text": "APPROVED"}]}
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    resumed = cli(root, "implement", "006", "-q", "--answer", f"review-failed-{SIGN}=retry")
    assert resumed.returncode == 0, resumed.stderr
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert [r["state"] for r in rows] == ["done"]
