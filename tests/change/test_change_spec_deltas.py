"""OpenSpec delta specs (ADDED/MODIFIED/REMOVED/RENAMED) applied with OpenSpec's semantics.

``CASES`` re-expresses, as data, the spec-application cases of OpenSpec's own
archive tests (apply order, already-applied deltas, refusals naming the
requirement, new specs), plus what the base snapshot adds: a requirement the
delta modifies or removes that someone else changed meanwhile is a conflict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from phasegate.change import merge_spec
from phasegate.change.specdelta import SpecDeltaError, is_delta
from phasegate.errors import ExitCode

SAME = "<base is the living spec>"


def spec(*blocks: str, purpose: str = "Bookmark handling.") -> str:
    """A living OpenSpec spec: title, Purpose, Requirements with the given blocks."""
    body = "\n\n".join(blocks)
    return f"# bookmarks Specification\n\n## Purpose\n{purpose}\n\n## Requirements\n\n{body}\n"


def delta(**sections: str) -> str:
    """A delta spec with the given sections (``added=...`` -> ``## ADDED Requirements``)."""
    parts = [f"## {name.upper()} Requirements\n\n{text}" for name, text in sections.items()]
    return "# Bookmarks - Changes\n\n" + "\n\n".join(parts) + "\n"


SYNC = (
    "### Requirement: Bookmarks sync across devices\n"
    "The system SHALL sync bookmarks between signed-in devices.\n\n"
    "#### Scenario: Second device\n- **WHEN** a bookmark is added on one device\n"
    "- **THEN** it appears on the other"
)
SYNC_NEW = SYNC.replace("between signed-in devices", "within a minute")
TAGS = "### Requirement: Tags\nThe system SHALL let readers tag bookmarks."
LEGACY = "### Requirement: Legacy Importer\nThe system SHALL import the old format."
RENAME_SYNC = (
    "- FROM: `### Requirement: Bookmarks sync across devices`\n"
    "- TO: `### Requirement: Bookmark sync`"
)


@dataclass(frozen=True)
class Case:
    """One delta applied to a living spec (``base``: the living spec when the change began)."""

    id: str
    living: str | None
    change: str
    base: str | None = SAME
    refused: str | None = None
    unchanged: bool = False
    contains: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    once: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


CASES = [
    Case(
        "added-creates-a-new-spec",
        living=None,
        base=None,
        change=delta(added=SYNC),
        contains=(
            "# bookmarks\n",
            "## Requirements\n\n### Requirement: Bookmarks sync",
            "#### Scenario: Second device",
        ),
        absent=("ADDED",),
    ),
    Case(
        "added-already-there-as-written",
        spec(SYNC, TAGS),
        delta(added=SYNC),
        unchanged=True,
        once=("Bookmarks sync across devices",),
    ),
    Case(
        "added-exists-with-other-text",
        spec(SYNC),
        delta(added=SYNC_NEW),
        refused="ADDED '### Requirement: Bookmarks sync across devices' is already in the living",
    ),
    Case(
        "renamed-already-applied",
        spec(SYNC.replace("Bookmarks sync across devices", "Bookmark sync")),
        delta(renamed=RENAME_SYNC),
        unchanged=True,
        once=("Requirement: Bookmark sync",),
        notes=("already renamed",),
    ),
    Case(
        "renamed-source-and-target-missing",
        spec(TAGS),
        delta(renamed=RENAME_SYNC),
        refused="RENAMED '### Requirement: Bookmarks sync across devices' is not in the living",
    ),
    Case(
        "removed-names-the-renamed-source",
        spec(SYNC),
        delta(renamed=RENAME_SYNC, removed="### Requirement: Bookmarks sync across devices"),
        refused="is both RENAMED and REMOVED",
    ),
    Case(
        "removed-names-the-renamed-source-in-other-case",
        spec(SYNC),
        delta(renamed=RENAME_SYNC, removed="### Requirement: bookmarks SYNC across devices"),
        refused="is both RENAMED and REMOVED",
    ),
    Case(
        "removed-already-applied",
        spec(TAGS),
        delta(removed=LEGACY + "\n**Reason**: Nobody uses the old format."),
        base=spec(TAGS, LEGACY),
        unchanged=True,
        notes=("already removed",),
    ),
    Case(
        "modified-already-applied",
        spec(SYNC_NEW, TAGS),
        delta(modified=SYNC_NEW),
        base=spec(SYNC, TAGS),
        unchanged=True,
    ),
    Case(
        "renamed-already-applied-but-the-source-is-there-in-other-case",
        spec(TAGS.replace("Tags", "tags"), "### Requirement: Labels\nThe system SHALL label."),
        delta(renamed="- FROM: `### Requirement: Tags`\n- TO: `### Requirement: Labels`"),
        refused="'### Requirement: Tags' is not in the living spec, but '### Requirement: tags' is",
    ),
    Case(
        "removed-name-differs-in-case-only",
        spec(LEGACY),
        delta(removed="### Requirement: legacy importer"),
        refused=(
            "REMOVED '### Requirement: legacy importer' is not in the living spec, "
            "but '### Requirement: Legacy Importer' is"
        ),
    ),
    Case(
        "removed-ignored-when-the-spec-is-new",
        living=None,
        base=None,
        change=delta(added=TAGS, removed="### Requirement: Folders\n### Requirement: Stars"),
        contains=("### Requirement: Tags",),
        absent=("Folders", "Stars"),
        notes=("2 REMOVED requirement(s) ignored",),
    ),
    Case(
        "modified-refused-when-the-spec-is-new",
        None,
        delta(added=TAGS, modified=SYNC),
        base=None,
        refused="only ADDED requirements can create it",
    ),
    Case(
        "renamed-refused-when-the-spec-is-new",
        None,
        delta(added=TAGS, renamed=RENAME_SYNC),
        base=None,
        refused="only ADDED requirements can create it",
    ),
    Case(
        "modified-header-matches-without-its-trailing-spaces",
        spec(TAGS),
        delta(modified="### Requirement: Tags   \nThe system SHALL let readers tag and untag."),
        contains=("### Requirement: Tags\n", "tag and untag"),
        absent=("let readers tag bookmarks.",),
    ),
    Case(
        "operations-apply-renamed-removed-modified-added",
        spec("### Requirement: A\ncontent A", "### Requirement: B\ncontent B"),
        delta(
            renamed="- FROM: `### Requirement: A`\n- TO: `### Requirement: C`",
            removed="### Requirement: B",
            modified="### Requirement: C\nupdated C",
            added="### Requirement: D\ncontent D",
        ),
        contains=("### Requirement: C\nupdated C", "### Requirement: D\ncontent D"),
        absent=("Requirement: A", "Requirement: B", "content A", "content B"),
    ),
    Case(
        "modified-missing",
        spec(TAGS),
        delta(modified="### Requirement: Missing\nnew text"),
        refused="MODIFIED '### Requirement: Missing' is not in the living spec",
    ),
    Case(
        "modified-names-the-old-header-of-a-rename",
        spec("### Requirement: Old\nold body"),
        delta(
            renamed="- FROM: `### Requirement: Old`\n- TO: `### Requirement: New`",
            modified="### Requirement: Old\nnew body",
        ),
        refused="use its new name '### Requirement: New'",
    ),
    Case(
        "modified-names-the-new-header-of-a-rename",
        spec("### Requirement: Old\nold body"),
        delta(
            renamed="- FROM: `### Requirement: Old`\n- TO: `### Requirement: New`",
            modified="### Requirement: New\nnew body",
        ),
        contains=("### Requirement: New\nnew body",),
        absent=("Requirement: Old", "old body"),
    ),
    Case(
        "modified-from-a-stale-base-drops-a-scenario-someone-added",
        spec(
            SYNC
            + "\n\n#### Scenario: Offline device\n- **WHEN** a device is offline\n"
            + "- **THEN** it syncs later"
        ),
        delta(modified=SYNC_NEW),
        base=spec(SYNC),
        conflicts=("Requirement: Bookmarks sync across devices",),
    ),
    Case(
        "removed-someone-else-changed",
        spec(LEGACY + " And the older one."),
        delta(removed="### Requirement: Legacy Importer"),
        base=spec(LEGACY),
        conflicts=("Requirement: Legacy Importer",),
    ),
    Case(
        "added-differently-by-someone-else",
        spec(TAGS, SYNC),
        delta(added=SYNC_NEW),
        base=spec(TAGS),
        conflicts=("Requirement: Bookmarks sync across devices",),
    ),
    Case(
        "removed-never-there",
        spec(TAGS),
        delta(removed="### Requirement: Folders"),
        refused="REMOVED '### Requirement: Folders' is not in the living spec",
    ),
    Case(
        "no-operations",
        spec(TAGS),
        "# Bookmarks - Changes\n\n## ADDED Requirements\n\nNothing yet.\n",
        refused="list no requirement",
    ),
    Case(
        "added-twice",
        spec(TAGS),
        delta(added=SYNC + "\n\n" + SYNC),
        refused="ADDED lists '### Requirement: Bookmarks sync across devices' twice",
    ),
    Case(
        "delta-with-requirement-ids",
        "# Auth\n\n## Requirements\n\n### AUTH-R1: Login\nPassword.\n\n"
        "### AUTH-R2: Session expiry\nOne hour.\n",
        delta(
            modified="### AUTH-R2: Session expiry\nThirty minutes.", removed="### AUTH-R1: Login"
        ),
        contains=("### AUTH-R2: Session expiry\nThirty minutes.",),
        absent=("AUTH-R1", "One hour"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_openspec_archive_cases(case: Case) -> None:
    """OpenSpec's archive semantics, case by case (see CASES)."""
    base = case.living if case.base == SAME else case.base
    if case.refused is not None:
        with pytest.raises(SpecDeltaError) as caught:
            merge_spec(base, case.living, case.change, name="bookmarks")
        assert case.refused in str(caught.value)
        assert caught.value.exit_code is ExitCode.BAD_INPUT
        return
    merged = merge_spec(base, case.living, case.change, name="bookmarks")
    assert merged.delta
    assert merged.conflicts == list(case.conflicts)
    if case.unchanged:
        assert merged.text == case.living and merged.changed == []
    for text in case.contains:
        assert text in merged.text
    for text in case.absent:
        assert text not in merged.text
    for text in case.once:
        assert merged.text.count(text) == 1
    for note in case.notes:
        assert any(note in n for n in merged.notes), merged.notes


def test_a_delta_never_lands_in_the_living_spec_as_text() -> None:
    """No `## MODIFIED Requirements` heading in the result, and the requirement appears once."""
    living = spec(SYNC, TAGS)
    merged = merge_spec(living, living, delta(modified=SYNC_NEW, added=LEGACY))
    assert "Requirements\n" in merged.text and "MODIFIED" not in merged.text
    assert "ADDED" not in merged.text
    assert merged.text.count("Bookmarks sync across devices") == 1
    assert merged.text.index("### Requirement: Tags") < merged.text.index("Legacy Importer")


def test_an_applied_delta_applied_again_changes_nothing() -> None:
    """A re-run after a crash: byte-identical, nothing reported as changed."""
    living = spec(SYNC, TAGS, LEGACY)
    change = delta(
        renamed=RENAME_SYNC,
        removed="### Requirement: Legacy Importer",
        added="### Requirement: Stars\nStar a bookmark.",
    )
    once = merge_spec(living, living, change)
    twice = merge_spec(living, once.text, change)
    assert (twice.text, twice.changed, twice.conflicts) == (once.text, [], [])


def test_added_requirements_go_to_a_requirements_section_made_when_missing() -> None:
    """A living spec without `## Requirements` gets one at its end."""
    living = "# bookmarks\n\n## Purpose\nBookmarks.\n"
    merged = merge_spec(living, living, delta(added=TAGS))
    assert merged.text == living + "\n## Requirements\n\n" + TAGS + "\n"


def test_a_delta_keeps_a_crlf_living_spec_crlf_and_its_other_bytes() -> None:
    """No churn: only the modified requirement is rewritten, in CRLF."""
    living = spec(SYNC, TAGS).replace("\n", "\r\n")
    merged = merge_spec(living, living, delta(modified=SYNC_NEW))
    assert merged.text == living.replace("between signed-in devices", "within a minute")


def test_only_delta_headings_make_a_delta() -> None:
    """A full spec mentioning ADDED in its text, or in a fence, is merged as a full spec."""
    assert is_delta(delta(added=TAGS))
    assert not is_delta(spec(TAGS) + "\n```\n## ADDED Requirements\n```\n")
    assert not is_delta(spec(TAGS, "### Requirement: ADDED Requirements\nA name."))
