"""PLAN.md as people write it, read with markdown-it-py (seed 004: Task Structure
Enhancement; Context Ingestion Pattern, step 2: tasks with metadata, execution types,
validation checkpoints, completion status)."""

from __future__ import annotations

from pathlib import Path

import pytest
from implement_helpers import FIXTURES

from phasegate.errors import BadInputError, NotFoundError
from phasegate.implement.plan import Plan, parse_plan, read_plan

HEADINGS = FIXTURES / "plan-phase-headings.md"
ITEMS = FIXTURES / "plan-phase-items.md"


def plan_of(path: Path) -> Plan:
    return parse_plan(path.read_text(encoding="utf-8"), path)


def titles(plan: Plan) -> list[str]:
    return [t.title for p in plan.phases for t in p.tasks]


def test_phase_headings_hold_the_checkbox_tasks_under_them() -> None:
    """Seed 004's layout: each 'Phase N' heading is a phase; its checkbox items its tasks."""
    plan = plan_of(HEADINGS)
    assert [p.title for p in plan.phases] == [
        "Phase 1: Delivery Core",
        "Phase 2: Retries and Docs",
    ]
    assert titles(plan) == [
        "Create the delivery queue table",
        "Sketch the dispatcher loop",
        "Sign outgoing payloads",
        "Retry failed deliveries with backoff",
        "Document the webhook headers",
    ]
    assert [t.line for t in plan.phases[0].tasks] == [17, 23, 27]


def test_seed_metadata_names_agent_review_and_focus() -> None:
    """Seed 004: [`agent: the-developer`] [`review: true`] [`review_focus: security, patterns`]."""
    first, sketch, sign = plan_of(HEADINGS).phases[0].tasks
    assert (first.agent, first.review, first.review_focus) == (
        "the-data-engineer",
        True,
        ("data integrity", "migrations"),
    )
    assert (sketch.agent, sketch.review) == ("the-developer", False)
    assert sign.review_focus == ("security",)
    assert sign.metadata["complexity"] == "high"


def test_ticked_tasks_are_done() -> None:
    """Context Ingestion Pattern: completion status comes from the checkboxes."""
    tasks = plan_of(HEADINGS).phases[0].tasks
    assert [t.done for t in tasks] == [False, True, False]


def test_subtasks_notes_and_code_belong_to_their_task() -> None:
    """Nested bullets, notes and code under a task are the task's details, never tasks."""
    first, _, sign = plan_of(HEADINGS).phases[0].tasks
    assert "Add a migration for the `deliveries` table" in first.details
    assert "Note: keep the migration reversible." in first.details
    assert "this line is an example inside a fence" in sign.details


@pytest.mark.parametrize(
    "hidden",
    [
        "this line is an example inside a fence, never a task",
        "a task someone commented out",
        "an indented code block, never a task",
    ],
)
def test_fences_indented_code_and_html_comments_are_never_tasks(hidden: str) -> None:
    """A fenced block, an indented code block or an HTML comment is never a task."""
    plan = plan_of(HEADINGS)
    assert all(hidden not in t.title for t in plan.tasks())
    assert all(hidden not in p.message for p in plan.problems)


def test_execution_marker_marks_a_phase_parallel_or_sequential() -> None:
    """Seed 004: the orchestrator identifies the execution type (parallel/sequential)."""
    one, two = plan_of(HEADINGS).phases
    assert (one.parallel, two.parallel) == (False, True)
    assert [t.parallel for t in one.tasks] == [False, False, False]
    assert [t.parallel for t in two.tasks] == [True, True]


def test_validation_item_is_the_phase_checkpoint_not_a_task() -> None:
    """Context Ingestion Pattern: validation checkpoints are read, not delegated."""
    one, two = plan_of(HEADINGS).phases
    assert [c.title for c in one.checkpoints] == [
        "Validation: run the unit tests of the dispatcher"
    ]
    assert all(not t.checkpoint for t in one.tasks)
    assert two.checkpoints == ()


def test_unknown_metadata_is_kept_and_reported_with_its_line() -> None:
    """Unknown metadata is reported with file:line, never silently dropped."""
    plan = plan_of(HEADINGS)
    retry = plan.phases[1].tasks[0]
    assert retry.metadata["owner"] == "platform-team"
    notes = plan.notes("PLAN.md")
    # Its column too: where the unknown metadata starts on the line.
    assert any(
        n.startswith("PLAN.md:44:120: unknown metadata `owner: platform-team`") for n in notes
    )


def test_checkboxes_outside_any_phase_are_reported_not_run() -> None:
    """A 'Completion Criteria' checklist is not a task; each item is reported with its line."""
    notes = plan_of(HEADINGS).notes("PLAN.md")
    assert "PLAN.md:57: checkbox outside any phase (under 'Completion Criteria') is not a task" in (
        notes
    )
    assert len([n for n in notes if "outside any phase" in n]) == 2


def test_phase_items_layout_reads_numbered_tasks_and_their_metadata() -> None:
    """the-startup's later template: top-level checkbox items are phases, theirs are tasks."""
    plan = plan_of(ITEMS)
    assert [p.title for p in plan.phases] == [
        "T001 Search Index Foundation",
        "T002 Query Endpoints",
    ]
    assert titles(plan) == [
        "T001.1 Prime Context",
        "T001.2 Write Tests",
        "T001.3 Implement the Tokeniser",
        "T002.1 Ranking Service",
        "T002.2 Search API",
    ]
    prime, tests, tokeniser = plan.phases[0].tasks
    assert prime.done and not tests.done
    assert tests.metadata == {"activity": "test-execution"}
    assert tokeniser.agent == "the-developer"
    assert [t.parallel for t in plan.phases[1].tasks] == [True, True]
    assert [c.title for c in plan.phases[0].checkpoints] == ["T001.4 Validate"]
    assert plan.phases[0].checkbox_line == 27


def test_a_bad_metadata_value_is_an_error_naming_file_and_line() -> None:
    """Parse errors stop with file:line (exit 2), the plan is not guessed at."""
    text = "## Phase 1: A\n\n- [ ] **Do it** [`parallel: maybe`] [`complexity: huge`]\n"
    plan = parse_plan(text, Path("PLAN.md"))
    with pytest.raises(BadInputError) as caught:
        plan.raise_errors("docs/specs/1/PLAN.md")
    message = str(caught.value)
    # file:line:column: each error at the metadata it is about.
    assert "docs/specs/1/PLAN.md:3:17: `parallel: maybe` must be true or false" in message
    assert "docs/specs/1/PLAN.md:3:37: `complexity: huge` must be one of" in message


def test_metadata_written_without_key_value_is_reported() -> None:
    """Something that looks like metadata but is not 'key: value' is reported, not dropped."""
    plan = parse_plan("## Phase 1\n\n- [ ] Do it [`agent the-developer`]\n", Path("PLAN.md"))
    assert plan.notes("PLAN.md") == [
        "PLAN.md:3:13: [`agent the-developer`] is not metadata (write [`key: value`])"
    ]


def test_a_plan_without_tasks_is_an_error() -> None:
    """A PLAN.md listing no task stops with its path: there is nothing to implement."""
    with pytest.raises(BadInputError, match=r"PLAN\.md:1: the plan lists no tasks"):
        parse_plan("# Plan\n\nNothing yet.\n", Path("PLAN.md")).raise_errors("PLAN.md")


def test_a_plan_of_checkboxes_without_phases_says_where_tasks_go() -> None:
    """Checkbox items outside any phase are not tasks; a plan of only those says how a
    phase is written instead of only "no tasks"."""
    plan = parse_plan("# Plan\n\n- [ ] Sign payloads\n- [ ] Retry\n", Path("PLAN.md"))
    with pytest.raises(BadInputError) as raised:
        plan.raise_errors("PLAN.md")
    assert str(raised.value) == (
        "PLAN.md:1: the plan lists no tasks (2 checkbox item(s) outside any phase: tasks go "
        "under a '## Phase N: ...' heading, or inside a top-level checkbox item that is a phase)"
    )


def test_a_missing_plan_names_its_path(tmp_path: Path) -> None:
    """PLAN.md is required: a clear error naming the path."""
    with pytest.raises(NotFoundError, match=r"docs/specs/9/PLAN.md: no such file"):
        read_plan(tmp_path / "PLAN.md", "docs/specs/9/PLAN.md")


def test_task_hashes_survive_edits_elsewhere_in_the_plan() -> None:
    """A task's hash comes from its own title: other edits, moves and renames keep it."""
    text = HEADINGS.read_text()
    before = {t.title: t.key for t in parse_plan(text, HEADINGS).tasks()}
    edited = (
        text.replace("## Phase 1: Delivery Core", "## Phase 1: Core of delivery")
        .replace(
            "- [ ] **Validation**",
            "- [ ] **Write the runbook** [`agent: the-developer`]\n\n- [ ] **Validation**",
        )
        .replace("Poll the queue every second", "Poll the queue every 500 ms")
        .replace("[`review_focus: security`]", "[`review_focus: security, crypto`]")
    )
    after = {t.title: t.key for t in parse_plan(edited, HEADINGS).tasks()}
    assert all(after[title] == k for title, k in before.items())


def test_tasks_with_the_same_title_get_different_hashes() -> None:
    """Two tasks titled alike stay two tasks (the second adds its position)."""
    text = "## Phase 1\n\n- [ ] Write tests\n\n## Phase 2\n\n- [ ] Write tests\n"
    first, second = parse_plan(text, Path("PLAN.md")).tasks()
    assert first.key != second.key


def test_crlf_and_a_byte_order_mark_keep_line_numbers() -> None:
    """Windows line endings and a BOM do not shift lines or hide the first heading."""
    text = "\ufeff" + HEADINGS.read_text().replace("\n", "\r\n")
    plan = parse_plan(text, HEADINGS)
    assert [t.line for t in plan.phases[0].tasks] == [17, 23, 27]
