"""The three-way spec merge on specs as users write them: removal, finer units, no churn.

The fixtures in ``fixtures/specs/`` are a spec-kit spec.md and two versions of
a spec written like seed 002's (its ids renumbered `R1` -> `WF-R1`, one
requirement dropped, one added).
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from phasegate.change import merge_spec
from phasegate.change.specunits import parse_units

FIXTURES = Path(__file__).parent / "fixtures" / "specs"
SPECKIT = (FIXTURES / "speckit-spec.md").read_text(encoding="utf-8")
WORKFLOWS = (FIXTURES / "workflows-base.md").read_text(encoding="utf-8")
WORKFLOWS_NEXT = (FIXTURES / "workflows-change.md").read_text(encoding="utf-8")

AUTH = """\
# Auth

## Requirements

### AUTH-R1: Login
Users log in with a password.

### AUTH-R2: Session expiry
Sessions expire after one hour.

## Notes

Nothing yet.
"""


def edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


# 1. Markdown structure: fences and comments hide nothing and invent nothing.


def test_a_heading_inside_a_fence_or_comment_is_not_a_requirement() -> None:
    """`### ...` lines in a tilde fence or an HTML comment are text of the requirement above."""
    example = "~~~markdown\n### AUTH-R8: Example\nShown, not required.\n~~~\n\n"
    example += "<!--\n### AUTH-R9: Draft\nNot yet.\n-->\n"
    base = edit(AUTH, "with a password.\n", "with a password.\n" + example)
    change = edit(base, "Shown, not required.", "Shown only.")
    living = edit(base, "with a password.", "with a passkey.")
    assert merge_spec(base, living, change).conflicts == ["AUTH-R1: Login"]
    change = edit(base, "Not yet.", "Later.")
    assert merge_spec(base, living, change).conflicts == ["AUTH-R1: Login"]


def test_a_heading_inside_a_backtick_fence_is_not_a_requirement() -> None:
    """The `### R9` line inside the Flow diagram is text of the Flow section, not a unit."""
    change = edit(WORKFLOWS, "### R9: not a requirement", "### R9: still not a requirement")
    living = edit(WORKFLOWS, "built --> verified: verify PASS", "built --> verified: verify OK")
    merged = merge_spec(WORKFLOWS, living, change)
    assert merged.conflicts == ["Flow"]  # both edited the one Flow section


def test_a_requirement_bullet_inside_a_fence_or_comment_is_not_a_unit() -> None:
    """Only real list items are FR units: examples in fences and comments stay with their block."""
    example = "```markdown\n- **FR-900**: example only\n```\n<!-- - **FR-901**: commented -->\n"
    base = edit(SPECKIT, "### Key Entities\n", "### Key Entities\n\n" + example)
    change = edit(base, "FR-900**: example only", "FR-900**: example, reworded")
    living = edit(base, "a reader's named collection", "a reader's named list")
    merged = merge_spec(base, living, change)
    assert merged.conflicts == ["Key Entities"]


# 4. Removal is possible: three-way at the level of units.


def test_a_requirement_the_change_leaves_out_is_removed() -> None:
    """In the base, absent from the change's version, unchanged in the living spec: deleted."""
    change = edit(AUTH, "### AUTH-R2: Session expiry\nSessions expire after one hour.\n\n", "")
    merged = merge_spec(AUTH, AUTH, change)
    assert "AUTH-R2" not in merged.text and "AUTH-R1: Login" in merged.text
    assert merged.text == change and merged.conflicts == []


def test_leaving_out_a_requirement_someone_else_changed_is_a_conflict() -> None:
    """Deleting what another change edited meanwhile would lose its edit: a conflict."""
    change = edit(AUTH, "### AUTH-R2: Session expiry\nSessions expire after one hour.\n\n", "")
    living = edit(AUTH, "after one hour.", "after two hours.")
    merged = merge_spec(AUTH, living, change)
    assert merged.conflicts == ["AUTH-R2: Session expiry"]
    resolved = merge_spec(AUTH, living, change, prefer_change=True)
    assert "AUTH-R2" not in resolved.text


def test_replaying_a_renumbered_spec_leaves_only_its_new_version() -> None:
    """Seed 002's own change: `### R1` ... become `### WF-R1` ..., R5 dropped: no doubling."""
    merged = merge_spec(WORKFLOWS, WORKFLOWS, WORKFLOWS_NEXT)
    assert merged.conflicts == []
    assert merged.text == WORKFLOWS_NEXT
    assert "### R1:" not in merged.text and "Manual Override" not in merged.text
    assert merged.text.count("Stage-Only State Machine") == 1


def test_the_replay_keeps_what_another_change_added_meanwhile() -> None:
    """A requirement someone else added after the base is neither deleted nor duplicated."""
    extra = "### OPS-R1: Audit Log\n\nEvery stage change MUST be logged.\n\n"
    living = edit(WORKFLOWS, "## Flow\n", extra + "## Flow\n")
    merged = merge_spec(WORKFLOWS, living, WORKFLOWS_NEXT)
    assert merged.conflicts == []
    assert merged.text.count("OPS-R1: Audit Log") == 1
    assert merged.text.index("WF-R5") < merged.text.index("OPS-R1") < merged.text.index("## Flow")


def test_a_renamed_requirement_is_not_kept_beside_its_new_name() -> None:
    """A rename is a delete plus an add."""
    change = edit(AUTH, "### AUTH-R2: Session expiry", "### AUTH-R3: Session lifetime")
    merged = merge_spec(AUTH, AUTH, change)
    assert "AUTH-R2" not in merged.text and merged.text.count("Sessions expire") == 1
    assert merged.text == change


def test_a_requirement_moved_to_another_section_is_not_duplicated() -> None:
    """Moving a unit between `##` sections deletes it in the old one."""
    change = edit(AUTH, "### AUTH-R2: Session expiry\nSessions expire after one hour.\n\n", "")
    change += "\n### AUTH-R2: Session expiry\nSessions expire after one hour.\n"
    merged = merge_spec(AUTH, AUTH, change)
    assert merged.text.count("### AUTH-R2") == 1
    assert merged.text.index("## Notes") < merged.text.index("### AUTH-R2")


def test_renumbered_user_stories_are_not_duplicated() -> None:
    """spec-kit's `### User Story N - ...`: a story inserted as 2 renumbers the next ones."""
    new_story = (
        "### User Story 2 - Export as JSON (Priority: P2)\n\n"
        "A developer exports the list as JSON.\n\n---\n\n"
    )
    change = edit(SPECKIT, "### User Story 3 - Schedule", "### User Story 4 - Schedule")
    change = edit(change, "### User Story 2 - Export as OPML", "### User Story 3 - Export as OPML")
    change = edit(
        change, "### User Story 3 - Export as OPML", new_story + "### User Story 3 - Export as OPML"
    )
    merged = merge_spec(SPECKIT, SPECKIT, change)
    assert merged.conflicts == [] and merged.text == change
    assert merged.text.count("Export as OPML for feed readers (Priority") == 1
    assert merged.text.count("Schedule a weekly export") == 1


def test_deleting_a_section_that_gained_a_requirement_meanwhile_is_a_conflict() -> None:
    """A section the change drops is kept, and reported, when someone else added to it."""
    change = edit(AUTH, "## Notes\n\nNothing yet.\n", "")
    living = AUTH + "\n### NOTE-1: Keep sessions short\nA note added meanwhile.\n"
    merged = merge_spec(AUTH, living, change)
    assert merged.conflicts == ["Notes"]


def test_a_merge_with_removals_is_idempotent() -> None:
    """Archiving again after a crash changes nothing more."""
    once = merge_spec(WORKFLOWS, WORKFLOWS, WORKFLOWS_NEXT)
    twice = merge_spec(WORKFLOWS, once.text, WORKFLOWS_NEXT)
    assert (twice.text, twice.changed, twice.conflicts) == (once.text, [], [])


# 5. Finer units: requirement bullets with ids.


def test_two_changes_editing_different_fr_bullets_do_not_conflict() -> None:
    """FR-001 and FR-012 are units of their own, in either archive order."""
    first = edit(SPECKIT, "export any list they own as CSV", "export any list they can see as CSV")
    second = edit(SPECKIT, "in the reader's time zone", "in UTC")
    for one, two in ((first, second), (second, first)):
        after_one = merge_spec(SPECKIT, SPECKIT, one).text
        merged = merge_spec(SPECKIT, after_one, two)
        assert merged.conflicts == []
        assert "any list they can see as CSV" in merged.text and "export in UTC" in merged.text


def test_two_changes_editing_the_same_fr_bullet_conflict() -> None:
    """The unit is the bullet: the same FR edited two ways is a conflict named by its id."""
    first = edit(SPECKIT, "within 30 seconds", "within 20 seconds")
    second = edit(SPECKIT, "within 30 seconds", "within 60 seconds")
    merged = merge_spec(SPECKIT, merge_spec(SPECKIT, SPECKIT, first).text, second)
    assert merged.conflicts == ["FR-006"]


def test_a_new_fr_bullet_lands_after_its_neighbour_and_a_removed_one_goes() -> None:
    """New FR-014 after FR-013, FR-007 dropped, while another change edits FR-001."""
    change = edit(SPECKIT, "- **FR-007**: System MUST keep generated files for 24 hours\n", "")
    change = edit(
        change,
        "retention period not specified]\n",
        "retention period not specified]\n- **FR-014**: System MUST name files after the list\n",
    )
    living = edit(SPECKIT, "export any list they own as CSV", "export any list they can see as CSV")
    merged = merge_spec(SPECKIT, living, change)
    assert merged.conflicts == []
    assert "FR-007" not in merged.text and "any list they can see" in merged.text
    text = merged.text
    assert text.index("FR-013") < text.index("FR-014") < text.index("### Key Entities")
    assert "retention period not specified]\n- **FR-014**: System MUST name files" in text


def test_text_after_an_fr_list_is_a_unit_of_its_own() -> None:
    """Editing the note after the list does not conflict with editing the list's last FR."""
    first = edit(SPECKIT, "*Example of marking unclear requirements:*", "*Unclear requirements:*")
    second = edit(SPECKIT, "which time zone for shared lists?", "the owner's?")
    merged = merge_spec(SPECKIT, merge_spec(SPECKIT, SPECKIT, first).text, second)
    assert merged.conflicts == []
    assert "*Unclear requirements:*" in merged.text and "the owner's?" in merged.text


# 7. No churn.


def test_a_merge_that_changes_nothing_leaves_the_file_byte_identical() -> None:
    """Odd blank lines, trailing spaces, no final newline: all kept when nothing changes."""
    living = "# Auth  \n\n\n## Requirements\n### AUTH-R1: Login\nUsers log in.   \n\n\n\n"
    living += "### AUTH-R2: X\ny"
    for change in (living, living.replace("\n\n\n\n", "\n\n"), living + "\n"):
        merged = merge_spec(living, living, change)
        assert merged.text == living and merged.changed == []


def test_untouched_units_keep_their_bytes_when_another_changes() -> None:
    """Only the edited unit is rewritten; the odd spacing elsewhere stays as it was."""
    living = "# Auth\n## Requirements\n\n\n### AUTH-R1: Login\nUsers log in.\n### AUTH-R2: X\ny\n"
    change = edit(living, "Users log in.", "Users log in with OAuth.")
    merged = merge_spec(living, living, change)
    assert merged.text == change


def test_a_crlf_living_spec_stays_crlf() -> None:
    """Merged text takes the living spec's line endings, whatever the change spec uses."""
    living = SPECKIT.replace("\n", "\r\n")
    change = edit(SPECKIT, "within 30 seconds", "within 20 seconds")
    change = edit(change, "SC-002**: Fewer", "SC-002**: Under 2% of exports fail; fewer")
    change += "- **SC-003**: Scheduled exports arrive on time\n"
    merged = merge_spec(SPECKIT, living, change)
    assert merged.text.count("\r\n") == merged.text.count("\n")
    assert merged.text.replace("\r\n", "\n") == change
    assert merge_spec(SPECKIT, living, SPECKIT).text == living


def test_a_byte_order_mark_is_kept_and_never_a_difference() -> None:
    """A spec saved with a BOM keeps it; a change spec without one does not edit the title."""
    living = "\ufeff" + AUTH.replace("\n", "\r\n")
    change = edit(AUTH, "after one hour.", "after two hours.")
    merged = merge_spec(living, living, change)
    assert merged.changed == ["AUTH-R2: Session expiry"]
    assert merged.text == "\ufeff" + change.replace("\n", "\r\n")


def test_merging_a_few_thousand_lines_is_fast() -> None:
    """Three-way merge of a 5000-line spec in well under a few seconds."""
    blocks = "".join(
        f"### REQ-{n}: Requirement {n}\n\nThe system MUST do thing {n}.\n\n"
        + "".join(f"- **FR-{n}-{k}**: detail {k}\n" for k in range(5))
        + "\n"
        for n in range(500)
    )
    base = "# Big\n\n## Requirements\n\n" + blocks
    change = base.replace("do thing 250.", "do thing 250 twice.").replace(
        "detail 3\n", "detail 3!\n"
    )
    started = time.perf_counter()
    merged = merge_spec(base, base, change)
    assert time.perf_counter() - started < 5.0
    assert merged.text == change


def test_a_new_requirement_in_a_section_someone_else_removed_is_a_conflict() -> None:
    """The change adds to a section the living spec no longer has: reported, never misplaced."""
    change = AUTH + "\n### NOTE-2: Rotate keys\nA new note.\n"
    living = edit(AUTH, "\n## Notes\n\nNothing yet.\n", "")
    assert merge_spec(AUTH, living, change).conflicts == ["NOTE-2: Rotate keys"]


def _mutated(base: str, rng: random.Random) -> str:
    """``base`` with units dropped, edited, and new requirements and FR bullets added."""
    out = []
    for unit in parse_units(base):
        roll = rng.random()
        if roll < 0.1:
            continue
        text = unit.text
        if roll < 0.25:
            text = text.replace("MUST", "SHALL", 1) if "MUST" in text else text.replace("a", "A", 1)
        out.append(text)
        if rng.random() < 0.05:
            number = rng.randint(100, 999)
            if unit.kind == "item":
                out.append(f"- **FR-{number}**: new item {number}\n")
            elif unit.kind == "block":
                out.append(f"### NEW-{number}: New block\n\nText {number}.\n\n")
    return "".join(out)


def _shape(text: str) -> list[tuple[str, tuple[str, str], str]]:
    return [(u.kind, u.key, u.normalized) for u in parse_units(text.replace("\r\n", "\n"))]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_unit_edits_merge_without_loss_or_duplication(seed: int) -> None:
    """Properties of the merge on the fixtures, under random edits of their units.

    Fast-forward (living = base): the result is the change's version. A re-run
    changes nothing. Two changes archived one after the other: when nothing
    conflicts, every unit either of them changed is in the result, and a re-run
    adds nothing.
    """
    rng = random.Random(seed)
    for _ in range(60):
        base = rng.choice([SPECKIT, WORKFLOWS, WORKFLOWS_NEXT])
        change = _mutated(base, rng)
        for living in (base, base.replace("\n", "\r\n")):
            merged = merge_spec(base, living, change)
            assert merged.conflicts == [] and _shape(merged.text) == _shape(change)
            again = merge_spec(base, merged.text, change)
            assert (again.text, again.changed) == (merged.text, [])
        first, second = _mutated(base, rng), _mutated(base, rng)
        after_first = merge_spec(base, base, first).text
        both = merge_spec(base, after_first, second)
        if both.conflicts:
            continue
        assert merge_spec(base, both.text, second).text == both.text
        kept = {u.normalized for u in parse_units(both.text)}
        in_base = {u.key: u.normalized for u in parse_units(base)}
        for version in (first, second):
            for unit in parse_units(version):
                if unit.normalized and in_base.get(unit.key) != unit.normalized:
                    assert unit.normalized in kept
