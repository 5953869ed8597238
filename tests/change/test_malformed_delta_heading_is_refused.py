"""A heading meant as an OpenSpec delta section but not written as one (``## ADDED
Requirement``, ``## Removed requirements:``) is refused at archive, naming its line and
the heading to write: read as written, the spec would be merged as a full version that
replaces the living spec whole (its other requirements deleted), or, inside a delta,
that section would be skipped."""

from __future__ import annotations

from pathlib import Path

import pytest
from change_helpers import changes, complete

from phasegate.change.specdelta import SpecDeltaError

LIVING = (
    "# bookmarks Specification\n\n## Purpose\nBookmarks.\n\n## Requirements\n\n"
    "### Requirement: Tags\nThe system SHALL let readers tag bookmarks.\n"
)


@pytest.mark.parametrize(
    ("delta", "where", "written", "meant"),
    [
        (
            "# Changes\n\n## ADDED Requirement\n\n### Requirement: Stars\nStar.\n",
            "3:1",
            "## ADDED Requirement",
            "## ADDED Requirements",
        ),
        (
            "# Changes\n\n## ADDED Requirements\n\n### Requirement: Stars\nStar.\n\n"
            "## Removed requirements:\n\n### Requirement: Tags\n",
            "8:1",
            "## Removed requirements:",
            "## REMOVED Requirements",
        ),
    ],
    ids=["a-full-version-by-mistake", "a-section-a-delta-would-skip"],
)
def test_a_delta_heading_written_wrong_refuses_the_archive(
    repo: Path, delta: str, where: str, written: str, meant: str
) -> None:
    living = repo / "specs" / "bookmarks.md"
    living.parent.mkdir(parents=True, exist_ok=True)
    living.write_text(LIVING)
    complete(repo, "tidy", specs=["bookmarks"], spec_writer=lambda name, current: delta)
    with pytest.raises(SpecDeltaError) as caught:
        changes(repo).archive("tidy")
    assert str(caught.value).startswith(
        f"cannot archive tidy: changes/tidy/specs/bookmarks.md:{where}: {written!r} is not an "
        f"OpenSpec delta section heading; write {meant!r}; nothing was written."
    ), str(caught.value)
    assert living.read_text() == LIVING
    assert changes(repo).state("tidy").phase.value == "complete"


def test_a_changelog_heading_in_a_full_version_is_merged(repo: Path) -> None:
    """``### Added`` (a changelog's heading) in a full version is text, not a delta typo."""
    living = repo / "specs" / "bookmarks.md"
    living.parent.mkdir(parents=True, exist_ok=True)
    living.write_text(LIVING)
    full = LIVING + "\n## History\n\n### Added\nTags, in 1.2.\n"
    complete(repo, "tidy", specs=["bookmarks"], spec_writer=lambda name, current: full)
    changes(repo).archive("tidy")
    assert living.read_text() == full
