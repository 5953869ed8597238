"""A team decision withdrawn while it waited (the run left its gate), then asked again, is
kept in status.json's user_decisions as skipped, with why: never as still pending."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    REPORT,
    cli,
    item_file,
    make_team_repo,
    status_json,
    team_script,
)


def test_withdrawn_decision_asked_again_is_listed_skipped(tmp_path: Path) -> None:
    script = team_script()
    # Docs empties docs/limit.md: the Definition of Done fails (AC-2) and UD-DOD is asked.
    script["docs"]["docs"] = [{"write": {item_file("report.md"): REPORT, "docs/limit.md": ""}}]
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
    assert "UD-DOD" in first.stderr
    # Leaving the gate for RELEASE withdraws UD-DOD; the next run asks it again.
    moved = cli(root, "run", ITEM, "--phase", "RELEASE", "--yes")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    again = cli(root, "run", ITEM)
    assert again.returncode == 3, again.stdout + again.stderr
    dod = [
        (d["visit"], d["status"], d["resolution_reason"])
        for d in status_json(root)["user_decisions"]
        if d["decision_id"] == "UD-DOD"
    ]
    assert dod == [
        (1, "skipped", "the run moved on from ASK_USER to RELEASE (--phase)"),
        (2, "pending", None),
    ]
