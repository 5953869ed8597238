"""tasks.md as users really write it: spec-kit, OpenSpec/agentd lists, agentd YAML tasks, iflow.

The fixtures in ``fixtures/tasks/`` are written in each tool's real format.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from phasegate.change import parse_tasks
from phasegate.change.frontmatter import split_frontmatter
from phasegate.change.tasks import TaskList, ensure_change_id
from phasegate.errors import BadInputError

FIXTURES = Path(__file__).parent / "fixtures" / "tasks"
PATH = Path("changes/add-oauth/tasks.md")


def fixture(name: str) -> TaskList:
    return parse_tasks((FIXTURES / name).read_text(encoding="utf-8"), PATH)


def ids(tasks: TaskList) -> list[str | None]:
    return [task.id for task in tasks.tasks]


# 1. Markdown is parsed as Markdown.


def test_fences_indented_code_and_html_comments_never_yield_tasks() -> None:
    """Tasks in a backtick fence, a tilde fence, indented code or an HTML comment are text."""
    found = ids(fixture("speckit-tasks.md"))
    assert not {"T900", "T901", "T950", "T960"} & set(found)
    assert found.count("T007") == 1 and found.count("T008") == 1  # not again from the fence


def test_a_heading_inside_a_fence_or_comment_starts_no_group() -> None:
    """A layer heading shown in an example is not a layer of the file."""
    text = (
        "## Phase 1: Setup\n- [ ] T001 Set up\n\n"
        "~~~markdown\n## 1. Data Layer\n- [ ] T901 example\n~~~\n\n"
        "<!--\n## 2. Logic Layer\n- [ ] T902 commented out\n-->\n\n"
        "```\n## Testing\n```\n- [ ] T002 Still in setup\n"
    )
    tasks = parse_tasks(text, PATH)
    assert [(layer.title, [t.id for t in layer.tasks]) for layer in tasks.layers] == [
        ("Phase 1: Setup", ["T001", "T002"])
    ]


def test_a_file_saved_with_a_byte_order_mark_and_crlf_reads_the_same() -> None:
    """Windows editors: BOM and CRLF change nothing (frontmatter, groups, tasks)."""
    text = (FIXTURES / "agentd-tasks.md").read_text(encoding="utf-8")
    windows = parse_tasks("\ufeff" + text.replace("\n", "\r\n"), PATH)
    assert windows == parse_tasks(text, PATH)
    assert windows.change_id_from == "frontmatter" and windows.order == "layers"


def test_task_lines_are_counted_in_the_file_with_its_frontmatter() -> None:
    """A task's line points at the file as written (frontmatter and CRLF included)."""
    text = (FIXTURES / "speckit-tasks.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    for task in parse_tasks(text.replace("\n", "\r\n"), PATH).tasks:
        assert task.text in lines[task.line - 1]


# 2. Document order, unless the file is organised by layers at its top level.


def test_speckit_phases_are_implemented_in_document_order() -> None:
    """Setup first, Polish last: spec-kit's phases are the groups, in the file's order."""
    tasks = fixture("speckit-tasks.md")
    assert tasks.order == "document"
    assert [layer.title for layer in tasks.layers] == [
        "Phase 1: Setup (Shared Infrastructure)",
        "Phase 2: Foundational (Blocking Prerequisites)",
        "Phase 3: User Story 1 - Export a reading list as CSV (Priority: P1) 🎯 MVP",
        "Phase 4: User Story 2 - Export as OPML for feed readers (Priority: P2)",
        "Phase 5: Polish & Cross-Cutting Concerns",
    ]
    assert ids(tasks) == [f"T{n:03d}" for n in range(1, 19)]


def test_a_storys_tests_come_before_its_implementation() -> None:
    """spec-kit: tests for a story are written first and fail; they are not moved after Polish."""
    story = fixture("speckit-tasks.md").layers[2]
    assert [t.id for t in story.tasks][:2] == ["T007", "T008"]
    assert story.tasks[0].text.startswith("T007 [P] [US1] Contract test")


def test_layer_words_in_sub_headings_do_not_move_tasks() -> None:
    """`#### API Routes ...` and `### Integration Testing` stay inside their phase."""
    layers = fixture("speckit-tasks.md").layers
    assert [t.id for t in layers[2].tasks][-2:] == ["T011", "T012"]
    assert [t.id for t in layers[4].tasks] == ["T016", "T017", "T018"]
    assert layers[0].tasks[0].id == "T001"


def test_document_order_groups_are_keyed_by_their_headings() -> None:
    """A document group's key is its heading as lowercase words (48 characters at most)."""
    keys = [layer.key for layer in fixture("speckit-tasks.md").layers]
    assert keys[:2] == [
        "phase-1-setup-shared-infrastructure",
        "phase-2-foundational-blocking-prerequisites",
    ]
    assert keys[2] == "phase-3-user-story-1-export-a-reading-list-as"
    assert all(len(key) <= 48 for key in keys)


def test_two_headings_with_one_key_get_distinct_keys() -> None:
    """Keys stay unique (they name the implementer's steps)."""
    text = "## Setup\n- [ ] a\n## Setup!\n- [ ] b\n- [ ] c\n"
    assert [layer.key for layer in parse_tasks(text, PATH).layers] == ["setup", "setup-2"]


def test_tasks_before_the_first_section_form_their_own_group() -> None:
    """Nothing is lost: tasks above the first section come first, as `tasks`."""
    text = "- [ ] early\n\n## Phase 1\n- [ ] later\n"
    tasks = parse_tasks(text, PATH)
    assert [(layer.key, len(layer.tasks)) for layer in tasks.layers] == [
        ("tasks", 1),
        ("phase-1", 1),
    ]


def test_phases_under_one_task_list_heading_are_the_groups() -> None:
    """The groups are the shallowest headings that split the tasks (iflow's `### Phase N`)."""
    tasks = fixture("iflow-tasks.md")
    assert tasks.order == "document"
    assert [layer.title for layer in tasks.layers] == [
        "Phase 1: Storage",
        "Phase 2: Sync Logic",
        "Phase 3: Interface",
    ]


def test_layers_are_inferred_when_every_top_level_section_names_one() -> None:
    """WF-R5: `## 1. Data Layer` ... at the top: layers, in Data-Logic-Integration-Testing order."""
    tasks = fixture("agentd-yaml-tasks.md")  # its Testing section comes first in the file
    assert tasks.order == "layers"
    assert [layer.key for layer in tasks.layers] == ["logic", "integration", "testing"]
    assert [layer.title for layer in tasks.layers] == [
        "Logic Layer",
        "Integration Layer",
        "Testing Layer",
    ]


def test_one_layer_per_section_when_the_file_is_in_layer_order() -> None:
    """agentd's layered tasks.md: one group per layer, details under a task are not tasks."""
    tasks = fixture("agentd-tasks.md")
    assert tasks.order == "layers"
    assert [(layer.key, [t.id for t in layer.tasks]) for layer in tasks.layers] == [
        ("data", ["1.1", "1.2"]),
        ("logic", ["2.1"]),
        ("integration", ["3.1"]),
        ("testing", ["4.1"]),
    ]
    assert [t.done for t in tasks.layers[0].tasks] == [True, False]


# 3. Only tasks are tasks.


def test_a_validation_checklist_is_not_a_task_list() -> None:
    """spec-kit's `## Validation Checklist` checkboxes are not tasks: T001-T018 are."""
    tasks = fixture("speckit-tasks.md")
    assert tasks.task_count == 18
    assert not any("contracts have corresponding tests" in t.text for t in tasks.tasks)


def test_a_checklist_section_holds_no_tasks_even_without_ids() -> None:
    """A checklist heading excludes its section, whatever the task format."""
    text = (
        "## 1. Build\n- [ ] 1.1 Build it\n\n"
        "## Review Checklist\n- [ ] Reviewed by a person\n\n"
        "## Acceptance Criteria\n- [ ] Works\n"
    )
    assert [t.text for t in parse_tasks(text, PATH).tasks] == ["1.1 Build it"]


def test_checkboxes_without_a_speckit_id_are_not_tasks_when_most_have_one() -> None:
    """In a T001-numbered file, an unnumbered checkbox (a gate, a note) is not a task."""
    text = (
        "## Phase 1\n- [ ] T001 One\n- [ ] T002 Two\n\n"
        "## Execution Status\n- [ ] Dependencies checked\n"
    )
    assert ids(parse_tasks(text, PATH)) == ["T001", "T002"]


def test_speckit_ids_parallel_markers_and_stories_are_kept() -> None:
    """`T012 [P] [US1] ...`: id T012, parallel, story US1; the text stays as written."""
    by_id = {t.id: t for t in fixture("speckit-tasks.md").tasks}
    assert (by_id["T002"].parallel, by_id["T002"].story) == (True, None)
    assert (by_id["T010"].parallel, by_id["T010"].story) == (False, "US1")
    assert (by_id["T014"].parallel, by_id["T014"].story) == (True, "US2")
    assert (
        by_id["T009"].text == "T009 [P] [US1] Implement the CSV writer in src/export/csv_writer.py"
    )
    assert [by_id[i].done for i in ("T001", "T002", "T003")] == [True, True, False]


def test_an_iflow_task_heading_is_one_task_with_its_bullets_as_details() -> None:
    """`#### Task N.M: title` with `- **Files:**` ... bullets: one task per heading."""
    tasks = fixture("iflow-tasks.md")
    assert tasks.task_count == 6
    assert [t.text for t in tasks.layers[0].tasks] == [
        "Task 1.1: Add the drafts table",
        "Task 1.2: Write the draft repository",
    ]
    assert ids(tasks) == ["1.1", "1.2", "2.1", "2.2", "2.3", "3.1"]


def test_a_task_heading_marked_done_is_done() -> None:
    """A `Task` heading with a tick or a ✅ is a finished task; `Task list` is not a task."""
    text = (
        "## Task list\n\n### Phase 1\n\n#### Task 1.1 Write it ✅\n- **Do:** write\n\n"
        "#### [x] Task 1.2: Test it\n\n#### Task 1.3 - Ship it\n"
    )
    tasks = parse_tasks(text, PATH)
    assert [(t.id, t.done) for t in tasks.tasks] == [("1.1", True), ("1.2", True), ("1.3", False)]


def test_agentd_yaml_tasks_are_read_with_their_ids_and_status() -> None:
    """agentd's later format: `### 1.1 title` and a fenced YAML block per task."""
    tasks = fixture("agentd-yaml-tasks.md")
    assert tasks.task_count == 4
    logic = tasks.layers[0]
    assert [(t.id, t.text, t.done) for t in logic.tasks] == [
        ("2.1", "2.1 Store refresh tokens", True),
        ("2.2", "2.2 Refresh tokens before they expire", False),
    ]
    assert [t.text for t in logic.open_tasks] == ["2.2 Refresh tokens before they expire"]


def test_a_numbered_heading_without_a_task_block_is_a_section() -> None:
    """`### 1.1 Schema` above checkbox tasks groups them; it is not a task itself."""
    text = (
        "## Phase 1: Schema\n\n### 1.1 Migration DDL\n\n- [ ] **T1.1.1: Write the test**\n"
        "  Details.\n- [x] **T1.1.2: Add the table**\n\n"
        "## Phase 2: API\n\n- [ ] **T2.1.1: Route**\n"
    )
    tasks = parse_tasks(text, PATH)
    assert [(layer.title, [t.id for t in layer.tasks]) for layer in tasks.layers] == [
        ("Phase 1: Schema", ["T1.1.1", "T1.1.2"]),
        ("Phase 2: API", ["T2.1.1"]),
    ]
    assert [t.done for t in tasks.tasks] == [False, True, False]


def test_agentd_frontmatter_id_is_the_change_id() -> None:
    """agentd writes the change id as `id:`; it counts like `change_id`."""
    tasks = fixture("agentd-yaml-tasks.md")
    assert (tasks.change_id, tasks.change_id_from) == ("add-oauth", "frontmatter")


def test_agentd_frontmatter_id_naming_another_change_is_refused() -> None:
    """A mismatched `id:` is refused like a mismatched `change_id`, naming the file."""
    text = (FIXTURES / "agentd-yaml-tasks.md").read_text().replace("id: add-oauth", "id: other")
    with pytest.raises(
        BadInputError, match=r"tasks\.md:2:5: frontmatter id 'other' does not match"
    ):
        parse_tasks(text, PATH)


def test_ensure_change_id_corrects_an_agentd_id_naming_another_change(tmp_path: Path) -> None:
    """WF-R3 step 3 in code: after it, tasks.md is read as this change's."""
    path = tmp_path / "add-oauth" / "tasks.md"
    path.parent.mkdir()
    text = (FIXTURES / "agentd-yaml-tasks.md").read_text().replace("id: add-oauth", "id: other")
    path.write_text(text)
    assert ensure_change_id(path, "add-oauth") == "added change_id; id was 'other'"
    front, _, _ = split_frontmatter(path.read_text())
    assert front is not None and (front["change_id"], front["id"], front["type"]) == (
        "add-oauth",
        "add-oauth",
        "tasks",
    )
    assert parse_tasks(path.read_text(), path).task_count == 4


def test_reading_a_few_thousand_lines_is_fast() -> None:
    """Parsing stays linear: a 6000-line spec-kit file reads well within a second or two."""
    phases = "".join(
        f"## Phase {p}: Part {p}\n\n### Tests for Part {p}\n\n"
        + "".join(f"- [ ] T{p * 100 + n:05d} [P] [US{p}] Task {n} of part {p}\n" for n in range(50))
        + "\n```bash\n- [ ] T99999 example\n```\n\n"
        for p in range(1, 101)
    )
    started = time.perf_counter()
    tasks = parse_tasks(phases, PATH)
    assert time.perf_counter() - started < 3.0
    assert tasks.task_count == 5000 and len(tasks.layers) == 100
