"""``phasegate archive``: requirement-level merge into the living specs, then the archive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from change_helpers import changes, complete

from phasegate.change import ArchiveConflict, ChangeNotReady, ChangePhase, merge_spec
from phasegate.change.specdelta import SpecDeltaError
from phasegate.errors import ExitCode

FIXTURES = Path(__file__).parent / "fixtures" / "specs"

LIVING = """\
# Auth

## Requirements

### AUTH-R1: Login
Users log in with a password.

### AUTH-R2: Session expiry
Sessions expire after one hour.
"""


def editing(old: str, new: str) -> Callable[[str, str | None], str]:
    """A spec writer that changes one sentence of the living auth spec."""

    def write(name: str, living: str | None) -> str:
        assert living is not None and old in living
        return living.replace(old, new)

    return write


def living_spec(repo: Path) -> Path:
    path = repo / "specs" / "auth.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LIVING)
    return path


def two_changes(repo: Path, first: tuple[str, str], second: tuple[str, str]) -> None:
    """Both changes are planned and completed before either is archived."""
    complete(repo, "change-a", specs=["auth"], spec_writer=editing(*first))
    complete(repo, "change-b", specs=["auth"], spec_writer=editing(*second))


def test_two_changes_to_different_requirements_of_one_spec_both_survive(repo: Path) -> None:
    """Archive merge: two changes touching the same spec file do not overwrite each other."""
    spec = living_spec(repo)
    two_changes(
        repo,
        ("with a password.", "with a password or OAuth."),
        ("after one hour.", "after thirty minutes."),
    )
    changes(repo).archive("change-a")
    changes(repo).archive("change-b")
    text = spec.read_text()
    assert "Users log in with a password or OAuth." in text
    assert "Sessions expire after thirty minutes." in text


def test_both_changing_one_requirement_is_refused_and_nothing_is_lost(repo: Path) -> None:
    """Archive merge: a true conflict stops with a clear message and loses nothing."""
    spec = living_spec(repo)
    two_changes(
        repo,
        ("with a password.", "with a password or OAuth."),
        ("with a password.", "with a passkey."),
    )
    changes(repo).archive("change-a")
    after_a = spec.read_bytes()
    change_b = repo / "changes/change-b"
    with pytest.raises(ArchiveConflict) as caught:
        changes(repo).archive("change-b")
    message = str(caught.value)
    assert "specs/auth.md 'AUTH-R1: Login'" in message and "nothing was written" in message
    assert caught.value.exit_code is ExitCode.BLOCKED
    assert spec.read_bytes() == after_a
    assert "with a passkey." in (change_b / "specs/auth.md").read_text()
    assert changes(repo).state("change-b").phase.value == "complete"


def test_resolved_takes_the_changes_version_of_a_conflict(repo: Path) -> None:
    """After merging by hand into the change's spec, --resolved archives it."""
    spec = living_spec(repo)
    two_changes(
        repo,
        ("with a password.", "with a password or OAuth."),
        ("with a password.", "with a passkey."),
    )
    changes(repo).archive("change-a")
    with pytest.raises(ArchiveConflict):  # what --resolved resolves is reported first
        changes(repo).archive("change-b")
    merged = repo / "changes/change-b/specs/auth.md"
    merged.write_text(merged.read_text().replace("with a passkey.", "with OAuth or a passkey."))
    changes(repo).archive("change-b", resolved=True)
    assert "Users log in with OAuth or a passkey." in spec.read_text()


def test_archive_moves_the_change_and_sets_archived(repo: Path) -> None:
    """State diagram: complete -> archived; the folder moves to the archive."""
    complete(repo, "add-oauth")
    outcome = changes(repo).archive("add-oauth")
    assert not (repo / "changes/add-oauth").exists()
    target = outcome.archived_to
    assert target.parent == repo / "changes/archive" and target.name.endswith("-add-oauth")
    state_text = (target / "STATE.yaml").read_text()
    assert "phase: archived" in state_text
    assert (target / "REVIEW.md").is_file() and (target / "proposal.md").is_file()


def test_a_new_spec_is_added_to_the_living_specs(repo: Path) -> None:
    """archive_workflow: updates specs/ (a spec the change creates appears there)."""
    complete(repo, "add-oauth")
    changes(repo).archive("add-oauth")
    assert "First requirement of session" in (repo / "specs/session.md").read_text()
    assert "First requirement of oauth-login" in (repo / "specs/oauth-login.md").read_text()


def test_archiving_again_reports_where_it_went(repo: Path) -> None:
    """archive is safe to repeat: an archived change is found in the archive."""
    complete(repo, "add-oauth")
    first = changes(repo).archive("add-oauth")
    again = changes(repo).archive("add-oauth")
    assert again.action == "already-archived" and again.archived_to == first.archived_to


def test_plan_and_impl_on_an_archived_change_find_it_in_the_archive(repo: Path) -> None:
    """Plan flow: archived is beyond planning; impl flow: archived is not ready."""
    agents = complete(repo, "add-oauth")
    changes(repo).archive("add-oauth")
    outcome = changes(repo).plan("add-oauth", backends={"default": agents.backend()})
    assert outcome.action == "beyond-planning" and "phase archived" in outcome.message
    with pytest.raises(ChangeNotReady, match="is in phase archived"):
        changes(repo).impl("add-oauth", backends={"default": agents.backend()})


def test_a_run_killed_before_the_move_is_finished_by_the_next(repo: Path) -> None:
    """Crash safety: STATE.yaml says archived, the folder is still in changes/."""
    complete(repo, "add-oauth")
    killed = subprocess.run(
        [sys.executable, "-m", "phasegate", "archive", "add-oauth"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PHASEGATE_CRASH_AT": "change.before_move"},
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    state = changes(repo).state("add-oauth")
    assert state.phase is ChangePhase.ARCHIVED and state.archived_to
    assert (repo / "changes/add-oauth/STATE.yaml").is_file()
    outcome = changes(repo).archive("add-oauth")
    assert outcome.archived_to == repo / state.archived_to
    assert (outcome.archived_to / "STATE.yaml").is_file()
    assert not (repo / "changes/add-oauth").exists()


def test_merging_is_idempotent() -> None:
    """A repeated merge (a re-run after a crash) changes nothing more."""
    change = LIVING.replace("one hour", "two hours")
    once = merge_spec(LIVING, LIVING, change)
    twice = merge_spec(LIVING, once.text, change)
    assert twice.text == once.text and twice.changed == [] and twice.conflicts == []


def test_a_requirement_marked_removed_is_deleted() -> None:
    """A change removes a requirement by leaving REMOVED as its body."""
    change = LIVING.replace("Sessions expire after one hour.", "REMOVED")
    merged = merge_spec(LIVING, LIVING, change)
    assert "AUTH-R2" not in merged.text and "AUTH-R1: Login" in merged.text


def test_archive_removes_a_requirement_the_change_leaves_out(repo: Path) -> None:
    """Removal is possible: a unit of the base the change's version leaves out is deleted."""
    spec = living_spec(repo)
    dropped = "### AUTH-R2: Session expiry\nSessions expire after one hour.\n"
    complete(repo, "change-a", specs=["auth"], spec_writer=editing(dropped, ""))
    changes(repo).archive("change-a")
    text = spec.read_text()
    assert "AUTH-R2" not in text and "AUTH-R1: Login" in text


def test_two_archived_changes_editing_different_fr_bullets_both_survive(repo: Path) -> None:
    """spec-kit's `- **FR-001**: ...` bullets are units: edits of two of them do not conflict."""
    spec = repo / "specs" / "auth.md"
    spec.parent.mkdir(parents=True)
    spec.write_text((FIXTURES / "speckit-spec.md").read_text())
    complete(repo, "change-a", specs=["auth"], spec_writer=editing("own as CSV", "can see as CSV"))
    complete(repo, "change-b", specs=["auth"], spec_writer=editing("30 seconds", "20 seconds"))
    changes(repo).archive("change-b")
    changes(repo).archive("change-a")
    text = spec.read_text()
    assert "any list they can see as CSV" in text and "within 20 seconds" in text


def test_an_unchanged_spec_stays_byte_identical_and_a_crlf_one_stays_crlf(repo: Path) -> None:
    """No churn: a spec the change leaves as it was is not rewritten; CRLF stays CRLF."""
    spec = repo / "specs" / "auth.md"
    spec.parent.mkdir(parents=True)
    crlf = LIVING.replace("\n", "\r\n").replace("## Requirements\r\n", "## Requirements  \r\n\r\n")
    spec.write_bytes(crlf.encode())
    complete(repo, "same", specs=["auth"], spec_writer=lambda _name, living: living or "")
    changes(repo).archive("same")
    assert spec.read_bytes() == crlf.encode()
    complete(repo, "edit", specs=["auth"], spec_writer=editing("one hour.", "two hours."))
    changes(repo).archive("edit")
    assert spec.read_bytes() == crlf.replace("one hour.", "two hours.").encode()


BOOKMARKS = """\
# bookmarks Specification

## Purpose
Bookmark handling.

## Requirements

### Requirement: Tags
The system SHALL let readers tag bookmarks.

#### Scenario: Tagging
- **WHEN** a reader tags a bookmark
- **THEN** the tag is shown
"""


def delta_writer(deltas: dict[str, str]) -> Callable[[str, str | None], str]:
    def write(name: str, living: str | None) -> str:
        return deltas[name]

    return write


def test_archive_applies_openspec_deltas_in_capability_folders(repo: Path) -> None:
    """OpenSpec layout: `specs/<capability>/spec.md` deltas applied, never merged as text."""
    living = repo / "specs" / "bookmarks" / "spec.md"
    living.parent.mkdir(parents=True)
    living.write_text(BOOKMARKS)
    deltas = {
        "bookmarks/spec.md": "# Bookmarks - Changes\n\n## MODIFIED Requirements\n\n"
        "### Requirement: Tags\nThe system SHALL let readers tag and untag bookmarks.\n\n"
        "## ADDED Requirements\n\n### Requirement: Stars\nThe system SHALL let readers star.\n",
        "stars/spec.md": "## Purpose\nStarred bookmarks.\n\n## ADDED Requirements\n\n"
        "### Requirement: Star count\nThe system SHALL count stars.\n",
    }
    specs = ["bookmarks/spec", "stars/spec"]
    complete(repo, "add-stars", specs=specs, spec_writer=delta_writer(deltas))
    outcome = changes(repo).archive("add-stars")
    assert set(outcome.merged) == {"specs/bookmarks/spec.md", "specs/stars/spec.md"}
    text = living.read_text()
    assert "tag and untag" in text and "### Requirement: Stars" in text
    assert "MODIFIED" not in text and "ADDED" not in text and text.count("Requirement: Tags") == 1
    created = (repo / "specs/stars/spec.md").read_text()
    assert created.startswith("# stars\n\n## Purpose\nStarred bookmarks.\n\n## Requirements\n")


def test_a_delta_that_cannot_apply_refuses_the_whole_archive(repo: Path) -> None:
    """Any refused delta aborts all: nothing written, the requirement and file named, exit 2."""
    living = repo / "specs" / "bookmarks" / "spec.md"
    living.parent.mkdir(parents=True)
    living.write_text(BOOKMARKS)
    (repo / "specs" / "auth.md").write_text(LIVING)
    deltas = {
        "auth.md": "## MODIFIED Requirements\n\n### AUTH-R2: Session expiry\nTwo hours.\n",
        "bookmarks/spec.md": "## MODIFIED Requirements\n\n### Requirement: Folders\nNew.\n",
    }
    complete(repo, "bad", specs=["auth", "bookmarks/spec"], spec_writer=delta_writer(deltas))
    with pytest.raises(SpecDeltaError) as caught:
        changes(repo).archive("bad")
    message = str(caught.value)
    assert "changes/bad/specs/bookmarks/spec.md" in message
    assert "MODIFIED '### Requirement: Folders' is not in the living spec" in message
    assert "nothing was written" in message and caught.value.exit_code is ExitCode.BAD_INPUT
    assert (repo / "specs" / "auth.md").read_text() == LIVING and living.read_text() == BOOKMARKS
    assert changes(repo).state("bad").phase.value == "complete"


def test_a_new_requirement_lands_in_its_section() -> None:
    """New requirements are placed after their neighbour in the change's spec."""
    change = LIVING.replace("### AUTH-R2", "### AUTH-R5: Logout\nUsers can log out.\n\n### AUTH-R2")
    merged = merge_spec(LIVING, LIVING + "\n## Notes\nnone\n", change).text
    assert merged.index("AUTH-R1") < merged.index("AUTH-R5") < merged.index("AUTH-R2")
    assert merged.index("AUTH-R2") < merged.index("## Notes")
