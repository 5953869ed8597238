"""`phasegate archive` of a change whose spec delta conflicts with the living specs, as a
user meets it: refused (exit 4) with nothing written, the conflict kept so that `status`,
`change status` and STATE.yaml say to merge by hand and run `archive ID --resolved`
(a plain `archive` would only find it again); after the merge `--resolved` archives it."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import complete

from cli_process import run_cli
from phasegate.errors import ExitCode

LIVING = """\
# auth Specification

## Purpose
Auth.

## Requirements

### Requirement: Login
The system SHALL let users log in with a password.

### Requirement: Session expiry
The system SHALL expire sessions after one hour.
"""

DELTA = """\
# Auth - Changes

## MODIFIED Requirements

### Requirement: Login
The system SHALL let users log in with a passkey.

## ADDED Requirements

### Requirement: Lockout
The system SHALL lock an account after five failed logins.
"""

RESOLVED = "--resolved"


def archived_a_before_b(repo: Path) -> Path:
    """change-a edits the Login requirement of the living spec, change-b's delta modifies it
    too; both complete, change-a archived. The living spec."""
    living = repo / "specs" / "auth.md"
    living.parent.mkdir()
    living.write_text(LIVING)
    complete(
        repo,
        "change-a",
        specs=["auth"],
        spec_writer=lambda name, text: (text or "").replace("a password.", "a password or OAuth."),
    )
    complete(repo, "change-b", specs=["auth"], spec_writer=lambda name, text: DELTA)
    assert run_cli(repo, "archive", "change-a").returncode == 0
    return living


def test_a_conflicting_delta_is_kept_for_status_until_resolved(repo: Path) -> None:
    living = archived_a_before_b(repo)
    after_a = living.read_bytes()

    refused = run_cli(repo, "archive", "change-b")
    assert refused.returncode == ExitCode.BLOCKED, refused.stderr
    assert "specs/auth.md 'Requirement: Login'" in refused.stderr
    assert f"phasegate archive change-b {RESOLVED}" in refused.stderr
    assert living.read_bytes() == after_a
    state = (repo / "changes/change-b/STATE.yaml").read_text()
    assert "phase: complete" in state and "archive_conflicts:" in state

    shown = json.loads(run_cli(repo, "status", "change-b", "--json").stdout)
    assert shown["nextCommand"].endswith(f"phasegate archive change-b {RESOLVED}")
    listed = json.loads(run_cli(repo, "change", "status", "change-b", "--json").stdout)
    assert listed["next"] == shown["nextCommand"]

    spec = repo / "changes/change-b/specs/auth.md"
    spec.write_text(spec.read_text().replace("a passkey.", "a password, OAuth or a passkey."))
    done = run_cli(repo, "archive", "change-b", RESOLVED)
    assert done.returncode == 0, done.stderr
    text = living.read_text()
    assert "log in with a password, OAuth or a passkey." in text
    assert "### Requirement: Lockout" in text and "### Requirement: Session expiry" in text
    (archived,) = (repo / "changes/archive").glob("*-change-b")
    assert "archive_conflicts" not in (archived / "STATE.yaml").read_text()


def test_resolved_takes_no_side_of_a_conflict_nobody_was_shown(repo: Path) -> None:
    """`--resolved` before any archive reported the conflict does not overwrite the other
    change's edit unseen: it reports the conflict (exit 4, nothing written) first."""
    living = archived_a_before_b(repo)
    after_a = living.read_bytes()
    early = run_cli(repo, "archive", "change-b", RESOLVED)
    assert early.returncode == ExitCode.BLOCKED, early.stderr
    assert "specs/auth.md 'Requirement: Login'" in early.stderr
    assert living.read_bytes() == after_a
    # Now it was shown: --resolved takes the change's side (here its passkey sentence).
    done = run_cli(repo, "archive", "change-b", RESOLVED)
    assert done.returncode == 0, done.stderr
    assert "log in with a passkey." in living.read_text()
