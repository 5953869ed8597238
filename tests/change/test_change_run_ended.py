"""A plain `phasegate run ID` of a change that has ended (archived) says so, as `run` of an
ended item of any workflow with commands does, instead of advising plan, impl, archive."""

from __future__ import annotations

from pathlib import Path

from change_helpers import complete

from cli_process import run_cli
from phasegate.errors import ExitCode


def test_a_plain_run_of_an_archived_change_says_it_has_ended(repo: Path) -> None:
    complete(repo, "add-oauth")
    complete(repo, "other")
    # Archived, but killed before the folder moved into the archive.
    killed = run_cli(repo, "archive", "add-oauth", env={"PHASEGATE_CRASH_AT": "change.before_move"})
    assert killed.returncode != 0
    assert "phase: archived" in (repo / "changes/add-oauth/STATE.yaml").read_text()
    ran = run_cli(repo, "run", "add-oauth")
    said = ran.stdout + ran.stderr
    assert ran.returncode == ExitCode.OK, said
    assert "add-oauth (change, mode standard, archived)" in said, said
    assert "run with its own commands" not in said, said
    # A change that goes on is still pointed to its commands.
    going_on = run_cli(repo, "run", "other")
    assert going_on.returncode == ExitCode.BAD_INPUT
    assert "run with its own commands" in going_on.stderr
