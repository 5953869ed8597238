"""An OpenSpec delta that cannot apply is refused naming ``file:line:column:`` of the
heading (or bullet) in the change's spec that names the requirement, so the user can go
straight to the line to fix; nothing is written and the change stays complete."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from change_helpers import changes, complete

from phasegate.change.specdelta import SpecDeltaError

LIVING = (
    "# bookmarks Specification\n\n## Purpose\nBookmarks.\n\n## Requirements\n\n"
    "### Requirement: Tags\nThe system SHALL let readers tag bookmarks.\n"
)


def _writer(delta: str) -> Callable[[str, str | None], str]:
    def write(name: str, living: str | None) -> str:
        return delta

    return write


@pytest.mark.parametrize(
    ("delta", "where", "said"),
    [
        (
            "# Changes\n\n## REMOVED Requirements\n\n### Requirement: Folders\nGone.\n",
            "5:1",
            "REMOVED '### Requirement: Folders' is not in the living spec",
        ),
        (
            "# Changes\n\n## MODIFIED Requirements\n\n### Requirement: Tags\nNew.\n\n"
            "### Requirement: Folders\nNew.\n",
            "8:1",
            "MODIFIED '### Requirement: Folders' is not in the living spec",
        ),
        (
            "# Changes\n\n## RENAMED Requirements\n\n- FROM: `### Requirement: Folders`\n"
            "- TO: `### Requirement: Dirs`\n",
            "5:10",
            "RENAMED '### Requirement: Folders' is not in the living spec",
        ),
        (
            "# Changes\n\n## REMOVED Requirements\n\n- `### Requirement: Folders`\n",
            "5:4",
            "REMOVED '### Requirement: Folders' is not in the living spec",
        ),
        (
            "# Changes\n\n## ADDED Requirements\n\n### Requirement: Stars\nA.\n\n"
            "## REMOVED Requirements\n\n### Requirement: Stars\n",
            "10:1",
            "'### Requirement: Stars' is in both ADDED and REMOVED",
        ),
    ],
    ids=["removed", "modified", "renamed", "removed-bullet", "in-two-sections"],
)
def test_a_refused_delta_names_the_line_and_column_of_its_requirement(
    repo: Path, delta: str, where: str, said: str
) -> None:
    living = repo / "specs" / "bookmarks.md"
    living.parent.mkdir(parents=True, exist_ok=True)
    living.write_text(LIVING)
    complete(repo, "tidy", specs=["bookmarks"], spec_writer=_writer(delta))
    with pytest.raises(SpecDeltaError) as caught:
        changes(repo).archive("tidy")
    assert str(caught.value).startswith(
        f"cannot archive tidy: changes/tidy/specs/bookmarks.md:{where}: {said}; "
        "nothing was written."
    ), str(caught.value)
    assert living.read_text() == LIVING
    assert changes(repo).state("tidy").phase.value == "complete"
