"""A task added to tasks.yaml while the session is stopped inside IMPLEMENT_LOOP (at a
decision) is implemented and reviewed before the final review, not left ``not-started``
in a session that reaches DONE (seed 003: every task reaches ``completed`` first)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    dispatched,
    item_file,
    make_team_repo,
    status_json,
    task_entries,
    tasks_yaml,
    team_script,
    verdict,
)

T3: dict[str, Any] = {
    "id": "T3",
    "title": "Log refusals",
    "goal": "Log each refused attempt",
    "dependencies": ["T1"],
    "acceptance_checks": ["cmd: test -s src/log.py"],
    "done_when": ["refusals are logged"],
    "risk_flags": ["none"],
    "files": ["src/log.py"],
    "status": "not-started",
}


def test_a_task_added_at_a_decision_inside_the_loop_is_done_before_done(tmp_path: Path) -> None:
    script = team_script()
    # T2's review has notes: the session stops at UD-T2-REVIEW-NOTES, inside the loop.
    script["reviewer"] = {
        "review:T2": [verdict("PASS WITH NOTES", "say the unit")],
        "*": [verdict("OK")],
    }
    script["coder"]["code:T3"] = [
        {
            "write": {
                "src/log.py": "def log(attempt):\n    print(attempt)\n",
                item_file("tasks.yaml"): tasks_yaml(
                    [*task_entries(), T3], T1="completed", T2="completed", T3="implemented"
                ),
            },
            "text": "logging written",
        }
    ]
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    first = cli(
        root,
        "run",
        ITEM,
        "--answer",
        "UD-APPROVE-DESIGN=approved",
        "--answer",
        "UD-REVIEW-STRATEGY=per-batch",
    )
    assert first.returncode == 3, first.stdout + first.stderr
    assert "UD-T2-REVIEW-NOTES" in first.stderr

    # The person adds a task to tasks.yaml while the session waits.
    tasks = root / SESSION / "tasks.yaml"
    tasks.write_text(tasks.read_text() + tasks_yaml([T3]).split("tasks:\n", 1)[1])
    shown = cli(root, "status", ITEM)
    assert "T3 Log refusals" in shown.stdout

    again = cli(root, "run", ITEM, "--answer", "UD-T2-REVIEW-NOTES=accept")
    assert again.returncode == 0, again.stdout + again.stderr
    statuses = {t["id"]: t["status"] for t in status_json(root)["tasks"]}
    assert statuses == {"T1": "completed", "T2": "completed", "T3": "completed"}
    assert status_json(root)["current_state"] == "DONE"
    calls = [str(e["key"]) for e in dispatched(root)]
    t3_review = next(i for i, k in enumerate(calls) if "tasks[T3]/review" in k)
    final_review = next(i for i, k in enumerate(calls) if k.startswith("final-review"))
    assert any("tasks[T3]/code" in k for k in calls[:t3_review])
    assert t3_review < final_review


def test_a_task_taken_out_of_tasks_yaml_before_its_turn_is_not_coded(tmp_path: Path) -> None:
    script = team_script()
    # T1's review has notes: the session stops at UD-T1-REVIEW-NOTES, T2 not begun.
    script["reviewer"] = {
        "review:T1": [verdict("PASS WITH NOTES", "say the unit")],
        "*": [verdict("OK")],
    }
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    first = cli(
        root,
        "run",
        ITEM,
        "--answer",
        "UD-APPROVE-DESIGN=approved",
        "--answer",
        "UD-REVIEW-STRATEGY=per-batch",
    )
    assert first.returncode == 3, first.stdout + first.stderr
    assert "UD-T1-REVIEW-NOTES" in first.stderr

    # The person drops T2 (and writes its document by hand).
    tasks = root / SESSION / "tasks.yaml"
    tasks.write_text(tasks_yaml(task_entries()[:1], T1="implemented"))
    (root / "docs").mkdir()
    (root / "docs" / "limit.md").write_text("# Limit\n\n5 attempts a minute.\n")

    again = cli(root, "run", ITEM, "--answer", "UD-T1-REVIEW-NOTES=accept")
    assert again.returncode == 0, again.stdout + again.stderr
    assert not any("tasks[T2]" in str(e["key"]) for e in dispatched(root))
    assert {t["id"]: t["status"] for t in status_json(root)["tasks"]} == {"T1": "completed"}
    assert "T2 skipped (no longer in tasks.yaml)" in again.stdout + again.stderr
