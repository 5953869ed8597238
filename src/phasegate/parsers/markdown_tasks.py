"""``markdown-tasks``: the tasks of a Markdown file, one foreach item each.

A task is what the ``change`` workflow's tasks.md reader counts as one
(:mod:`phasegate.change.taskformats`): checkbox items (``- [ ] ...``), task
headings (``#### Task 1.2: ...``), or, in a file with neither, each top-level
list item; unlike that reader, every checkbox is a task, with an id or not.
Fences, code and comments never hold tasks, and sections titled as checklists
or notes are skipped. A ticked task is done (a foreach with
``skip_done`` skips it). An item's key is the task's own id (``T012``,
``1.2``, or ``S1``, ``REQ2``: capital letters and a number, when every task
without a ``T`` or numbered id starts with one) or else its position (``1``,
``2``...); its title is the task's text without its id. ``(after T1, T2)`` or
``(depends on T1)`` in the text names the items it depends on (a foreach with
``order: deps`` runs those first, and a parallel one starts it once they are
done); a dependency that names no task of the file is refused::

    - [ ] T1: Add the bucket model
    - [ ] T2: Add the middleware (after T1)
"""

from __future__ import annotations

import re
from pathlib import Path

from phasegate.change.frontmatter import split_frontmatter
from phasegate.change.markdown import outline, split_lines
from phasegate.change.taskformats import TaskEntry, find_tasks
from phasegate.engine.plugin_api import ItemParser, Parsed, PluginContext, Task
from phasegate.errors import BadInputError, NotFoundError

_DEPS = re.compile(r"\s*\((?:after|depends on)\s+([^)]*)\)", re.IGNORECASE)
_LEADING_ID = re.compile(r"^\s*(?:\*\*)?([A-Za-z]*\d+(?:\.\d+)*)(?:\*\*)?\s*[:.)-]?\s+")
#: An id of capital letters and a number (``S1``, ``REQ12``, ``AB1.2``) leading a task's text.
_LETTER_ID = re.compile(r"^\s*(?:\*\*|__)?([A-Z]{1,4}\d+(?:\.\d+)*)(?:\*\*|__)?[:.)]?\s+\S")


def title_and_deps(entry: TaskEntry, task_id: str | None = None) -> tuple[str, tuple[str, ...]]:
    """A task's title (its text without its id, ``task_id`` if given, else the entry's)
    and the keys it names as dependencies."""
    text = entry.text.strip()
    deps: list[str] = []
    for match in _DEPS.finditer(text):
        deps += [d for d in re.split(r"[,\s]+", match.group(1)) if d and d.lower() != "and"]
    text = _DEPS.sub("", text).strip()
    found = _LEADING_ID.match(text)
    if found is not None and found.group(1) == (task_id or entry.id):
        text = text[found.end() :].strip() or text
    return text, tuple(deps)


def read_entries(path: Path) -> list[tuple[TaskEntry, int]]:
    """The tasks of the Markdown file at ``path`` with their 1-based lines, in order."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"{path} does not exist, so its tasks cannot be read") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot read tasks ({exc})") from None
    _, body, _ = split_frontmatter(text)
    offset = len(split_lines(text[: len(text) - len(body)]))  # the body is a suffix
    entries, _ = find_tasks(outline(body), speckit_ids=False)
    return [(entry, entry.line + offset + 1) for entry in entries]


def letter_ids(entries: list[TaskEntry]) -> list[str | None]:
    """Each task's own id: the one the reader found (``T1``, ``1.2``) or, when every task
    the reader found none for starts with one of capital letters and a number
    (``- [ ] S1 ...``, ``- [ ] REQ2: ...``), that one."""
    own = [_LETTER_ID.match(e.text) if e.id is None else None for e in entries]
    if any(e.id is None and m is None for e, m in zip(entries, own, strict=True)):
        return [e.id for e in entries]
    return [e.id or (m.group(1) if m else None) for e, m in zip(entries, own, strict=True)]


def read_items(path: Path) -> list[Task]:
    """The tasks of the Markdown file at ``path`` as foreach items, in order."""
    items: list[Task] = []
    used: set[str] = set()
    found = read_entries(path)
    ids = letter_ids([entry for entry, _ in found])
    for position, ((entry, line), task_id) in enumerate(zip(found, ids, strict=True), start=1):
        key = task_id or str(position)
        if key in used:
            key = f"{key}-{position}"
        used.add(key)
        title, deps = title_and_deps(entry, task_id)
        items.append(
            Task(
                key=key,
                title=title,
                deps=deps,
                done=entry.done,
                line=line,
                data={"parallel": entry.parallel},
            )
        )
    return items


def unknown_deps(items: list[Task]) -> list[str]:
    """Each task's dependencies that name no task of ``items``, said as a problem."""
    keys = [t.key for t in items]
    found: list[str] = []
    for task in items:
        missing = [d for d in task.deps if d not in keys]
        if missing:
            where = f" (line {task.line})" if task.line is not None else ""
            verb = "is" if len(missing) == 1 else "are"
            found.append(
                f"task {task.key}{where} depends on {', '.join(missing)}, which {verb} "
                f"not a task of the file (its tasks: {', '.join(keys)})"
            )
    return found


class MarkdownTasksParser(ItemParser):
    """Each task of a Markdown task list (checkboxes, task headings or list items)."""

    name = "markdown-tasks"
    needs_file = True

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        if path is None:
            raise BadInputError("the markdown-tasks parser needs a 'file' to read")
        items = read_items(path)
        unknown = unknown_deps(items)
        if unknown:
            raise BadInputError(f"{path}: {'; '.join(unknown)}")
        return Parsed(tuple(items), "document")

    def count(self, path: Path) -> int:
        return len(read_entries(path))

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        return unknown_deps(read_items(path))


MARKDOWN_TASKS = MarkdownTasksParser()
