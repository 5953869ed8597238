"""PLAN.md's checkboxes ticked byte-exactly (issue rule 9; seed 004: Cycle Manager,
"Update PLAN.md checkboxes")."""

from __future__ import annotations

from pathlib import Path

import pytest
from implement_helpers import FIXTURES, key

from phasegate.implement.checkboxes import PlanChanged, set_checkbox, tick_task
from phasegate.implement.plan import parse_plan

HEADINGS = FIXTURES / "plan-phase-headings.md"


def differing(before: bytes, after: bytes) -> list[int]:
    assert len(before) == len(after)
    return [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]


@pytest.mark.parametrize(
    "transform",
    [
        lambda s: s,
        lambda s: s.replace("\n", "\r\n"),
        lambda s: "\ufeff" + s,
        lambda s: s.replace("- [ ] **Sign", "* [ ] **Sign").replace("  - HMAC", "\t- HMAC"),
    ],
    ids=["lf", "crlf", "bom", "star-bullet-and-tab"],
)
def test_ticking_changes_exactly_one_byte(tmp_path: Path, transform: object) -> None:
    """An approved task's `[ ]` becomes `[x]`; every other byte stays (endings, BOM, tabs)."""
    path = tmp_path / "PLAN.md"
    path.write_bytes(transform(HEADINGS.read_text()).encode("utf-8"))  # type: ignore[operator]
    before = path.read_bytes()
    line = tick_task(path, key("Sign outgoing payloads"))
    after = path.read_bytes()
    changed = differing(before, after)
    assert line == 27
    assert len(changed) == 1 and after[changed[0] : changed[0] + 1] == b"x"
    assert before[changed[0] - 1 : changed[0] + 2] == b"[ ]"


def test_ticking_a_ticked_task_changes_nothing(tmp_path: Path) -> None:
    """Ticking is idempotent: a resumed run that ticks again leaves the file as it is."""
    path = tmp_path / "PLAN.md"
    path.write_text(HEADINGS.read_text())
    tick_task(path, key("Sign outgoing payloads"))
    once = path.read_bytes()
    tick_task(path, key("Sign outgoing payloads"))
    assert path.read_bytes() == once


def test_a_task_moved_since_the_plan_was_read_is_found_by_its_hash(tmp_path: Path) -> None:
    """A person edits the plan during a run: the tick still lands on the right task."""
    path = tmp_path / "PLAN.md"
    text = HEADINGS.read_text()
    path.write_text("Intro line\n\n" + text.replace("## Phase 2", "Extra note.\n\n## Phase 2"))
    line = tick_task(path, key("Retry failed deliveries with backoff"))
    task = parse_plan(path.read_text(), path).task(key("Retry failed deliveries with backoff"))
    assert task is not None and task.done and task.line == line == 48


def test_skip_is_ticked_marked_and_noted_under_the_task(tmp_path: Path) -> None:
    """A task skipped with a warning is ticked and gets one note line under its own text."""
    path = tmp_path / "PLAN.md"
    path.write_text(HEADINGS.read_text().replace("\n", "\r\n"))
    before = path.read_bytes()
    note = "⚠️ Skipped with warning (phasegate): the review timed out"
    tick_task(path, key("Create the delivery queue table"), note)
    after = path.read_bytes()
    lines = after.split(b"\r\n")
    assert lines[16].startswith(b"- [x] **Create the delivery queue table**")
    assert lines[17] == ("  - " + note).encode("utf-8")
    assert lines[18] == b"  - Add a migration for the `deliveries` table"
    # Apart from the tick and the inserted line, nothing changed.
    removed = after.replace(("  - " + note + "\r\n").encode("utf-8"), b"", 1)
    assert len(differing(before, removed)) == 1
    tick_task(path, key("Create the delivery queue table"), note)
    assert path.read_bytes() == after


def test_a_line_without_a_checkbox_is_refused(tmp_path: Path) -> None:
    """The writer never guesses: no checkbox where the plan says is an error."""
    with pytest.raises(PlanChanged):
        set_checkbox(b"# Plan\n- item\n", 2)
