"""The engine's own item parser: a Markdown task list, for any workflow's ``foreach``.

``task-list`` reads a file such as::

    - [ ] T1: Add the bucket model
    - [ ] T2: Add the HTTP middleware (after T1)
    - [x] T3: Document the limits
    - [ ] T4: Wire it up (depends on T1, T2)

Each checkbox (or, without any, each top-level list item) is an item; code
blocks and HTML comments never hold items. The key is the task's id (``T1``,
``1.2``, ``T012`` as spec-kit writes them) or, without one, its position
(``1``, ``2``...). ``(after X, Y)`` or ``(depends on X, Y)`` names the items it
depends on; a ticked box is done (a resumed or re-run loop skips it).
"""

from __future__ import annotations

import re
from pathlib import Path

from phasegate.change.markdown import outline
from phasegate.change.taskformats import find_tasks
from phasegate.engine.plugin_api import ItemParser, Parsed, PluginContext, Task
from phasegate.engine.prompting import read_file
from phasegate.errors import BadInputError

_DEPS = re.compile(r"\((?:after|depends on)\s+([^)]*)\)", re.IGNORECASE)
_ID_PREFIX = re.compile(r"^\s*(?:\*\*)?([A-Za-z]*\d+(?:\.\d+)*)(?:\*\*)?\s*[:.)-]?\s*")


class TaskListParser(ItemParser):
    """A Markdown task list (see the module docstring)."""

    name = "task-list"

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        if path is None:
            raise BadInputError("the task-list parser needs a file (items: {file: ...})")
        text = read_file(path)
        if text is None:
            raise BadInputError(f"{path} is missing: the task-list parser reads its items there")
        items: list[Task] = []
        for position, entry in enumerate(find_tasks(outline(text))[0], start=1):
            body = entry.text.strip()
            found = _ID_PREFIX.match(body)
            key = entry.id or (found.group(1) if found else str(position))
            title = body[found.end() :] if found and found.group(1) == key else body
            deps: list[str] = []
            for match in _DEPS.finditer(title):
                deps += [d for d in re.split(r"[,\s]+", match.group(1)) if d and d != "and"]
            title = _DEPS.sub("", title).strip()
            items.append(
                Task(
                    key=key,
                    title=title,
                    deps=tuple(deps),
                    done=entry.done,
                    line=entry.line + 1,
                    data={"parallel": entry.parallel},
                )
            )
        return Parsed(tuple(items), "task-list")

    def count(self, path: Path) -> int:
        text = read_file(path) or ""
        return len(find_tasks(outline(text))[0])


TASK_LIST = TaskListParser()
