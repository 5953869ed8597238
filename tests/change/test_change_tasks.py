"""tasks.md read robustly (WF-R5): change id and layers, with or without frontmatter."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.change import parse_tasks
from phasegate.change.frontmatter import split_frontmatter
from phasegate.change.tasks import ensure_change_id, layer_of
from phasegate.errors import BadInputError

PATH = Path("changes/add-oauth/tasks.md")

NO_FRONTMATTER = """\
# Tasks

## 1. Data Layer
- [ ] 1.1 Create the token model
  - File: app/models.py
- [x] 1.2 Add the migration

## 2. Logic Layer
- [ ] 2.1 Exchange codes
"""


def keys(text: str) -> list[str]:
    return [layer.key for layer in parse_tasks(text, PATH).layers]


def test_change_id_comes_from_the_frontmatter() -> None:
    """WF-R3 step 3: tasks.md carries change_id in its frontmatter."""
    tasks = parse_tasks("---\nchange_id: add-oauth\n---\n" + NO_FRONTMATTER, PATH)
    assert (tasks.change_id, tasks.change_id_from) == ("add-oauth", "frontmatter")


def test_change_id_is_inferred_from_the_directory_without_frontmatter() -> None:
    """WF-R5: the change_id is inferred from the directory structure."""
    tasks = parse_tasks(NO_FRONTMATTER, PATH)
    assert (tasks.change_id, tasks.change_id_from) == ("add-oauth", "directory")


def test_incomplete_frontmatter_falls_back_to_the_directory() -> None:
    """WF-R5: frontmatter without change_id is incomplete, not fatal."""
    tasks = parse_tasks("---\nversion: 1\n---\n" + NO_FRONTMATTER, PATH)
    assert (tasks.change_id, tasks.change_id_from) == ("add-oauth", "directory")


def test_unreadable_frontmatter_falls_back_to_the_directory() -> None:
    """WF-R5: broken YAML in the frontmatter does not stop the run."""
    tasks = parse_tasks("---\nchange_id: [unclosed\n---\n" + NO_FRONTMATTER, PATH)
    assert tasks.change_id_from == "directory"
    assert keys("---\nchange_id: [unclosed\n---\n" + NO_FRONTMATTER) == ["data", "logic"]


def test_data_layer_heading_marks_its_tasks_as_data_layer() -> None:
    """Scenario "Task Layer Inference": "## 1. Data Layer" tasks belong to the Data Layer."""
    (data, logic) = parse_tasks(NO_FRONTMATTER, PATH).layers
    assert data.key == "data" and data.headings == ["1. Data Layer"]
    assert [t.text for t in data.tasks] == ["1.1 Create the token model", "1.2 Add the migration"]
    assert [t.text for t in logic.tasks] == ["2.1 Exchange codes"]


@pytest.mark.parametrize(
    ("heading", "layer"),
    [
        ("1. Data Layer", "data"),
        ("Data Layer", "data"),
        ("2) Logic", "logic"),
        ("Phase 3: Integration", "integration"),
        ("4. Testing", "testing"),
        ("Tests", "testing"),
        ("**Data Layer**", "data"),
        ("Overview", None),
        ("Database notes", None),
    ],
)
def test_layer_headings_are_recognised(heading: str, layer: str | None) -> None:
    """WF-R5: layers (Data, Logic, Integration, Testing) from markdown headings."""
    assert layer_of(heading) == layer


def test_layers_come_in_data_logic_integration_testing_order() -> None:
    """WF-R5: impl works through the layers in order, whatever the document order."""
    text = (
        "## Testing\n- [ ] t\n## Integration Layer\n- [ ] i\n## Data\n- [ ] d\n## Logic\n- [ ] l\n"
    )
    assert keys(text) == ["data", "logic", "integration", "testing"]
    assert parse_tasks(text, PATH).order == "layers"


def test_a_top_level_section_that_names_no_layer_keeps_the_document_order() -> None:
    """Layers are inferred only when every top-level section names one; else document order."""
    text = "## 4. Testing\n- [ ] t\n## 5. Documentation\n- [ ] docs\n## 1. Data Layer\n- [ ] d\n"
    tasks = parse_tasks(text, PATH)
    assert tasks.order == "document"
    assert [layer.key for layer in tasks.layers] == ["4-testing", "5-documentation", "1-data-layer"]


def test_with_checkboxes_plain_bullets_are_notes_not_tasks() -> None:
    """Details under a task (and plain bullets) are not tasks of their own."""
    text = "## 1. Data Layer\nNotes:\n- keep it small\n- [ ] 1.1 Model\n  - File: a.py\n"
    (data,) = parse_tasks(text, PATH).layers
    assert [t.text for t in data.tasks] == ["1.1 Model"]


def test_checked_tasks_are_done() -> None:
    """A ticked box is a finished task."""
    (data, _) = parse_tasks(NO_FRONTMATTER, PATH).layers
    assert [t.done for t in data.tasks] == [False, True]
    assert [t.text for t in data.open_tasks] == ["1.1 Create the token model"]


def test_frontmatter_naming_another_change_is_refused_with_the_file() -> None:
    """A tasks.md copied from another change is caught, naming what and where."""
    with pytest.raises(BadInputError, match=r"tasks\.md:2:12: frontmatter change_id 'other'"):
        parse_tasks("---\nchange_id: other\n---\n" + NO_FRONTMATTER, PATH)


def test_ensure_change_id_keeps_other_frontmatter_keys(tmp_path: Path) -> None:
    """WF-R3 step 3, made sure of in code: change_id added, the author's keys kept."""
    path = tmp_path / "add-oauth" / "tasks.md"
    path.parent.mkdir()
    path.write_text("---\nversion: 2\n---\n" + NO_FRONTMATTER)
    assert ensure_change_id(path, "add-oauth") == "added change_id"
    front, body, _ = split_frontmatter(path.read_text())
    assert front == {"change_id": "add-oauth", "version": 2}
    assert body == NO_FRONTMATTER
    assert ensure_change_id(path, "add-oauth") is None


def test_broken_frontmatter_is_described_in_one_line_with_its_file_line() -> None:
    """The reason given for unreadable frontmatter names the line of the file (the
    frontmatter starts on line 2) and none of the parser's own framing."""
    text = "---\nchange_id: add-oauth\nlayers: [unclosed\n---\n" + NO_FRONTMATTER
    data, body, problem = split_frontmatter(text)
    assert data is None and body == NO_FRONTMATTER
    assert problem is not None and "\n" not in problem
    assert problem.startswith("invalid YAML frontmatter on line 4, column 1: ")
    assert "<unicode string>" not in problem
