"""What counts as a task in tasks.md, in each format phasegate reads.

- **Checkbox items** (`- [ ] 1.1 ...`, spec-kit's `- [ ] T001 [P] [US1] ...`,
  OpenSpec's and agentd's lists): with checkboxes in the file, only checkbox
  items are tasks; plain bullets are notes. In the ``change`` workflow's
  tasks.md, when most checkbox items carry a spec-kit id (`T001`, `T1.2.3`), a
  checkbox without one is not a task either (``find_tasks(speckit_ids=True)``);
  the general ``markdown-tasks`` parser takes every checkbox as a task.
- **Task headings**: the iflow plugin's `#### Task 1.2: title` (its bullets
  `- **Files:**`, `- **Do:**` ... are the task's details), and agentd's later
  `### 1.1 title` followed by a fenced YAML block (`id:`, `status:` ...).
  Everything under a task heading belongs to that task.
- **Plain list items**: in a file with neither, each top-level list item.

A section whose heading says it is a checklist (`## Validation Checklist`,
`## Review Checklist`) or is one of Notes, Summary, Overview, References,
Acceptance Criteria, Success Criteria, Definition of Done holds no tasks.
Fences, indented code and HTML comments never do (they are not Markdown
structure at all).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from phasegate.change.markdown import Fence, Heading, ListItem, Outline

_CHECKBOX = re.compile(r"^\[([ xX])\](?:[ \t]+|$)")
_TASK_HEADING = re.compile(
    r"^(?:\[[ xX]\]\s*)?task\s+(\d+(?:\.\d+)*)(?:\s*[:.)\-–—]\s*|\s+)\S", re.I
)
_NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+)+)[.)]?\s+\S")
_LEAD_ID = re.compile(
    r"^(?:\*\*|__)?(T\d+(?:\.\d+)*|\d+(?:\.\d+)+)(?:\*\*|__)?[:.)]?(?:\*\*|__)?(?:[ \t]+|$)"
)
_MARKER = re.compile(r"^\[([^\[\]\s]{1,12})\][ \t]*")
_SPECKIT_ID = re.compile(r"^T\d+(?:\.\d+)*$")
_STORY = re.compile(r"^US\d+$", re.I)
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.):]?\s+)")
_NOT_TASKS = {
    "notes",
    "note",
    "summary",
    "overview",
    "references",
    "acceptance criteria",
    "success criteria",
    "definition of done",
}
_DONE_STATUS = {"completed", "complete", "done"}


@dataclass(frozen=True)
class TaskEntry:
    """A task as found: its text, state, 0-based line, id and spec-kit markers."""

    text: str
    done: bool
    line: int
    id: str | None
    parallel: bool
    story: str | None
    heading: bool


def is_checklist(title: str) -> bool:
    """Whether a section with this heading is a checklist or notes, never tasks."""
    plain = _NUMBERING.sub("", title.strip().strip("*_ ")).strip().rstrip(":").strip("*_ ")
    lowered = " ".join(plain.lower().split())
    return "checklist" in lowered or lowered in _NOT_TASKS


def find_tasks(outline: Outline, *, speckit_ids: bool = True) -> tuple[list[TaskEntry], set[int]]:
    """The tasks of a parsed tasks.md, and the lines of the headings that are tasks.

    With ``speckit_ids`` (tasks.md of the ``change`` workflow), a checkbox without a
    spec-kit id is not a task when most checkboxes have one; without it, every
    checkbox is a task.
    """
    headings = outline.headings
    excluded = [_section(headings, i) for i, h in enumerate(headings) if is_checklist(h.title)]
    task_headings: list[tuple[int, TaskEntry]] = []
    for index, heading in enumerate(headings):
        entry = _heading_task(headings, index, outline.fences)
        if entry is not None and not _inside(heading.line, excluded):
            task_headings.append((index, entry))
    owned = [_section(headings, index) for index, _ in task_headings]
    items = [
        i for i in outline.items if not _inside(i.line, excluded) and not _inside(i.line, owned)
    ]
    checkboxes = [e for e in (_checkbox_task(i) for i in items) if e is not None]
    entries = [entry for _, entry in task_headings]
    if checkboxes:
        with_ids = [e for e in checkboxes if e.id and _SPECKIT_ID.match(e.id)]
        mostly_ids = speckit_ids and 2 * len(with_ids) > len(checkboxes)
        entries += with_ids if mostly_ids else checkboxes
    elif not task_headings:
        entries += [_plain_task(i) for i in items if i.top and i.text.strip()]
    entries.sort(key=lambda e: e.line)
    return entries, {headings[index].line for index, _ in task_headings}


def _section(headings: list[Heading], index: int) -> tuple[int, int]:
    """Lines ``[start, end)`` of heading ``index`` and everything under it."""
    level = headings[index].level
    for later in headings[index + 1 :]:
        if later.level <= level:
            return headings[index].line, later.line
    return headings[index].line, 1 << 62


def _inside(line: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= line < end for start, end in ranges)


def _heading_task(headings: list[Heading], index: int, fences: list[Fence]) -> TaskEntry | None:
    heading = headings[index]
    own_end = headings[index + 1].line if index + 1 < len(headings) else 1 << 62
    block = next(
        (
            data
            for fence in fences
            if heading.line < fence.line < own_end and fence.info.lower() in ("yaml", "yml")
            for data in [_yaml_mapping(fence.body)]
            if data is not None
        ),
        None,
    )
    titled = _TASK_HEADING.match(heading.title)
    if titled is not None:
        task_id: str | None = titled.group(1)
    else:
        numbered = _NUMBERED_HEADING.match(heading.title)
        if numbered is None or block is None or not ({"id", "status"} & set(block)):
            return None
        task_id = numbered.group(1)
    if block is not None and block.get("id") not in (None, ""):
        task_id = str(block["id"])
    status = str((block or {}).get("status", "")).strip().lower()
    done = (
        status in _DONE_STATUS or "✅" in heading.title or heading.title.lower().startswith("[x]")
    )
    _, parallel, story = _markers(heading.title)
    return TaskEntry(heading.title, done, heading.line, task_id, parallel, story, heading=True)


def _yaml_mapping(text: str) -> dict[str, Any] | None:
    from ruamel.yaml import YAML

    try:
        data = YAML(typ="safe", pure=True).load(text)
    except Exception:  # a broken block is just not task metadata
        return None
    return data if isinstance(data, dict) else None


def _checkbox_task(item: ListItem) -> TaskEntry | None:
    first = item.text.split("\n", 1)[0].strip()
    match = _CHECKBOX.match(first)
    if match is None:
        return None
    text = first[match.end() :].strip()
    if not text:
        return None
    task_id, parallel, story = _markers(text)
    done = match.group(1).lower() == "x"
    return TaskEntry(text, done, item.line, task_id, parallel, story, heading=False)


def _plain_task(item: ListItem) -> TaskEntry:
    text = item.text.split("\n", 1)[0].strip()
    task_id, parallel, story = _markers(text)
    return TaskEntry(text, False, item.line, task_id, parallel, story, heading=False)


def _markers(text: str) -> tuple[str | None, bool, str | None]:
    """``(id, parallel, story)`` from ``T012 [P] [US1] ...`` or ``1.1 ...``."""
    match = _LEAD_ID.match(text)
    task_id = match.group(1) if match else None
    rest = text[match.end() :] if match else text
    parallel, story = False, None
    while (marker := _MARKER.match(rest)) is not None:
        label = marker.group(1)
        parallel = parallel or label == "P"
        if story is None and _STORY.match(label):
            story = label.upper()
        rest = rest[marker.end() :]
    return task_id, parallel, story
