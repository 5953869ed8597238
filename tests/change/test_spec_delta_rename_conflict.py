"""A RENAMED delta of a requirement that was in the living spec when the change began but
was removed (or renamed) there since: a conflict, as a MODIFIED of it is (exit 4 at
archive, `--resolved` takes the change's side), not "not in the living spec" (exit 2),
which no `--resolved` could get past."""

from __future__ import annotations

import pytest

from phasegate.change import merge_spec
from phasegate.change.specdelta import SpecDeltaError

BASE = """\
# auth Specification

## Purpose
Auth.

## Requirements

### Requirement: Login
Users log in with a password.

### Requirement: Expiry
Sessions expire.
"""
LIVING = BASE.replace("### Requirement: Login\nUsers log in with a password.\n\n", "")
RENAME = (
    "# Auth - Changes\n\n## RENAMED Requirements\n\n"
    "- FROM: `### Requirement: Login`\n- TO: `### Requirement: Log in`\n"
)
RENAME_AND_MODIFY = (
    RENAME + "\n## MODIFIED Requirements\n\n### Requirement: Log in\nUsers log in with a passkey.\n"
)


def test_renaming_a_requirement_removed_meanwhile_is_a_conflict() -> None:
    merged = merge_spec(BASE, LIVING, RENAME, name="auth")
    assert merged.conflicts == ["Requirement: Login"]
    both = merge_spec(BASE, LIVING, RENAME_AND_MODIFY, name="auth")
    assert both.conflicts == ["Requirement: Login", "Requirement: Log in"]


def test_resolved_takes_the_changes_side_of_the_rename() -> None:
    merged = merge_spec(BASE, LIVING, RENAME_AND_MODIFY, prefer_change=True, name="auth")
    assert merged.conflicts == []
    assert "### Requirement: Log in\nUsers log in with a passkey.\n" in merged.text
    assert "Requirement: Login" not in merged.text and "### Requirement: Expiry" in merged.text
    again = merge_spec(BASE, merged.text, RENAME_AND_MODIFY, prefer_change=True, name="auth")
    assert (again.text, again.changed, again.conflicts) == (merged.text, [], [])


def test_renaming_a_requirement_that_never_was_there_is_still_refused() -> None:
    with pytest.raises(SpecDeltaError, match="RENAMED '### Requirement: Login' is not in"):
        merge_spec(LIVING, LIVING, RENAME, name="auth")
