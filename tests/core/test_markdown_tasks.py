"""The ``markdown-tasks`` parser: each task of a Markdown file, as a foreach item.

Rules (docs/workflows.md, Plug-ins): tasks are found as the change workflow's
tasks.md reader finds them; a task's key is its own id or its position; a
ticked task is done; its line is its 1-based line in the file, frontmatter
included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.errors import NotFoundError
from phasegate.parsers.markdown_tasks import MARKDOWN_TASKS

PLAN = """---
title: Plan
---
# Plan

Some prose, and a fence that holds no task:

```
- [ ] not a task
```

## Tasks

- [ ] T1 Add the limiter
- [x] T2 Return 429
- [ ] T3 Document it
"""


def parse(path: Path) -> list[tuple[str, str, bool, int | None]]:
    items = MARKDOWN_TASKS.parse(None, path).items
    return [(t.key, t.title, t.done, t.line) for t in items]


def test_tasks_are_keyed_by_their_ids_with_state_and_line(tmp_path: Path) -> None:
    """Checkbox tasks with ids: keyed by id, ticked is done, lines count the frontmatter."""
    path = tmp_path / "plan.md"
    path.write_text(PLAN)
    assert parse(path) == [
        ("T1", "Add the limiter", False, 14),
        ("T2", "Return 429", True, 15),
        ("T3", "Document it", False, 16),
    ]
    assert MARKDOWN_TASKS.count(path) == 3


def test_tasks_without_ids_are_keyed_by_position(tmp_path: Path) -> None:
    """No ids: the keys are 1, 2, ... in document order."""
    path = tmp_path / "plan.md"
    path.write_text("# Plan\n\n- [ ] Add the limiter\n- [ ] Return 429\n")
    assert [key for key, *_ in parse(path)] == ["1", "2"]


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    """A file that is not there is a clear error naming it, never a traceback."""
    with pytest.raises(NotFoundError, match=r"plan\.md does not exist"):
        parse(tmp_path / "plan.md")


def test_dependencies_are_read_from_after_and_depends_on(tmp_path: Path) -> None:
    """``(after T1, T2)`` and ``(depends on T1)`` name an item's dependencies; the marker
    is not part of the title."""
    path = tmp_path / "tasks.md"
    path.write_text(
        "- [ ] T1: The bucket\n- [ ] T2: The clock (after T1)\n"
        "- [ ] T3: Wire it (depends on T1, T2)\n- [ ] T4 Docs (After T3)\n"
    )
    items = MARKDOWN_TASKS.parse(None, path).items
    assert [(t.key, t.title, t.deps) for t in items] == [
        ("T1", "The bucket", ()),
        ("T2", "The clock", ("T1",)),
        ("T3", "Wire it", ("T1", "T2")),
        ("T4", "Docs", ("T3",)),
    ]
