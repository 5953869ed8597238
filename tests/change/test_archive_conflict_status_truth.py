"""After `phasegate archive` refused a change on a spec conflict (exit 4), `status` tells
the truth: nothing is executing; the archive waits on a merge by hand, then
`phasegate archive ID --resolved`."""

from __future__ import annotations

import json
from pathlib import Path

from test_archive_conflict_cli import archived_a_before_b

from cli_process import run_cli
from phasegate.dashboard import data as dashboard
from phasegate.errors import ExitCode


def test_status_after_an_archive_conflict_says_it_waits_on_a_merge(repo: Path) -> None:
    archived_a_before_b(repo)
    assert run_cli(repo, "archive", "change-b").returncode == ExitCode.BLOCKED

    shown = run_cli(repo, "status", "change-b")
    assert shown.returncode == 0, shown.stderr
    assert "iteration" not in shown.stdout.split("phase", 1)[0], shown.stdout
    assert "(execute)" not in shown.stdout, shown.stdout
    assert "waiting on a merge by hand" in shown.stdout, shown.stdout
    assert "specs/auth.md" in shown.stdout, shown.stdout
    assert "phasegate archive change-b --resolved" in shown.stdout, shown.stdout

    data = json.loads(run_cli(repo, "status", "change-b", "--json").stdout)
    assert data["inProgress"]["stage"] == "conflict", data["inProgress"]
    listed = run_cli(repo, "status").stdout
    assert "(1/" not in listed and "complete (conflict)" in listed, listed
    rows = {row["id"]: row for row in dashboard.list_items(repo)}
    assert rows["change-b"]["node"] == "complete (conflict)", rows["change-b"]
