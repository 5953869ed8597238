"""`phasegate status ID` of a complete change does not give the phase it is in as the next
one ("next: complete"): it names the command to run next, `phasegate archive ID`."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import complete

from cli_process import run_cli


def test_status_of_a_complete_change_names_archive_as_the_next_step(repo: Path) -> None:
    complete(repo, "add-oauth")
    shown = run_cli(repo, "status", "add-oauth")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "  Phase: complete" in lines, shown.stdout
    assert "next: complete" not in shown.stdout, shown.stdout
    assert "  Next: phasegate archive add-oauth" in lines, shown.stdout
    data = json.loads(run_cli(repo, "status", "add-oauth", "--json").stdout)
    assert (data["currentPhase"], data["nextPhase"]) == ("complete", None)
    assert data["nextCommand"] == "phasegate archive add-oauth"
