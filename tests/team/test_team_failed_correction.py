"""A design correction whose call failed is made again on the next run, never taken for one
that was interrupted and closed with the change request dropped."""

from __future__ import annotations

from pathlib import Path

from team_helpers import (
    ARCHITECTURE,
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    decision,
    dispatched,
    item_file,
    make_team_repo,
    status_json,
    team_script,
    write_config,
)

CORRECTED = ARCHITECTURE.replace("- src/limit.py: the limiter", "- src/limit.py: a sliding window")


def test_a_failed_correction_is_dispatched_again_on_the_next_run(tmp_path: Path) -> None:
    script = team_script()
    # The Architect's correction writes status.json (phasegate's): the call fails.
    script["architect"]["correct-architecture"] = [
        {"write": {item_file("architecture.md"): CORRECTED, item_file("status.json"): "{}"}}
    ]
    repo = make_team_repo(tmp_path / "repo", script)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    assert cli(repo, "run", ITEM).returncode == 3
    asked = "changes-requested: use a sliding window"
    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", asked).returncode == 0
    failed = cli(repo, "run", ITEM)
    assert failed.returncode == 6, failed.stdout + failed.stderr
    assert "architect changed phasegate's own files" in failed.stderr

    script["architect"]["correct-architecture"] = [
        {"write": {item_file("architecture.md"): CORRECTED}}
    ]
    write_config(repo, script)
    again = cli(repo, "run", ITEM)
    assert again.returncode == 3, again.stdout + again.stderr
    out = again.stdout + again.stderr
    assert "interrupted" not in out
    corrections = [e for e in dispatched(repo) if e["path"] == "correct-architecture"]
    assert len(corrections) == 2
    assert (repo / SESSION / "architecture.md").read_text() == CORRECTED
    gate = status_json(repo)["gate_tracking"]["APPROVE_DESIGN"]
    assert gate["correction_status"] == "completed"
    entry = decision(repo, "UD-APPROVE-DESIGN")
    assert entry["status"] == "pending" and entry["visit"] == 2
    assert "interrupted" not in entry["question"]
