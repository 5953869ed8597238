"""tasks.md: the change's tasks, in the groups ``impl`` works through one by one.

The file is parsed as Markdown (see :mod:`phasegate.change.taskformats` for
what counts as a task in each supported format). Its tasks are then grouped
by the file's top-level sections, the shallowest heading level that splits
the tasks into two or more sections (`## Phase 1: Setup` ..., or the `###`
phases under one `## Task List`):

- **layers** (WF-R5): when every such section names a layer (`## 1. Data
  Layer`, `## Logic`, `## 3. Integration`, `## Tests` ...), the sections are
  merged by layer and run Data, Logic, Integration, Testing, whatever their
  order in the file. Group key ``data`` / ``logic`` / ``integration`` /
  ``testing``, title ``Data Layer`` ...
- **document** order otherwise (spec-kit's phases, user stories with their
  tests first, Polish last): one group per section, in the file's order.
  Group key: the heading in lowercase ASCII words joined by ``-`` (at most 48
  characters; ``-2``, ``-3`` ... when two headings give the same key; ``tasks``
  for tasks before any heading); title: the heading as written.

A sub-heading never moves its tasks out of its section. ``plan`` makes sure
the frontmatter carries ``change_id``; without it the change id comes from the
folder (WF-R5), and agentd's ``id:`` key is read the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from phasegate.change.frontmatter import join_frontmatter, split_frontmatter
from phasegate.change.markdown import Heading, outline, split_lines
from phasegate.change.taskformats import TaskEntry, find_tasks
from phasegate.errors import BadInputError, NotFoundError
from phasegate.state.atomic import atomic_write_text

#: The layers in the order ``impl`` works through them when layers are inferred.
LAYER_ORDER: tuple[str, ...] = ("data", "logic", "integration", "other", "testing")
LAYER_TITLES = {
    "data": "Data Layer",
    "logic": "Logic Layer",
    "integration": "Integration Layer",
    "other": "Other tasks",
    "testing": "Testing Layer",
}

#: Which rule ordered the groups: layers inferred from the headings, or the document's order.
TaskOrder = Literal["layers", "document"]

_LAYER_WORD = re.compile(
    r"^(?:(?:layer|phase|step|part)\s*)?(?:\d+(?:\.\d+)*[.):]?\s*)?(?:layer\s*\d*\s*[:.-]?\s*)?"
    r"(data|logic|domain|business|integration|api|testing|tests?)\b",
    re.I,
)
_SYNONYMS = {
    "data": "data",
    "logic": "logic",
    "domain": "logic",
    "business": "logic",
    "integration": "integration",
    "api": "integration",
    "testing": "testing",
    "tests": "testing",
    "test": "testing",
}
_ID_KEYS = ("change_id", "id")


@dataclass(frozen=True)
class Task:
    """One task of tasks.md: its text as written, whether it is ticked, its 1-based line.

    ``id`` is the task's own id (spec-kit ``T012``, ``1.1``, iflow's ``Task 1.2``
    -> ``1.2``, agentd's YAML ``id``); ``parallel`` is spec-kit's ``[P]`` marker
    (may run beside the other ``[P]`` tasks of its group); ``story`` its
    ``[US1]`` label.
    """

    text: str
    done: bool
    line: int
    id: str | None = None
    parallel: bool = False
    story: str | None = None


@dataclass
class Layer:
    """One group of tasks ``impl`` implements together (a layer, or a section of the file)."""

    key: str
    headings: list[str] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    title: str = ""

    def __post_init__(self) -> None:
        if not self.title:
            self.title = LAYER_TITLES.get(self.key, self.key)

    @property
    def open_tasks(self) -> list[Task]:
        """The tasks not ticked yet."""
        return [t for t in self.tasks if not t.done]


@dataclass(frozen=True)
class TaskList:
    """tasks.md read: its change id (and where that came from) and its task groups in order.

    ``order`` says which rule ordered ``layers``: ``"layers"`` (inferred from
    layer headings, WF-R5) or ``"document"`` (the file's sections in order).
    """

    change_id: str
    change_id_from: Literal["frontmatter", "directory"]
    layers: tuple[Layer, ...]
    order: TaskOrder = "document"

    @property
    def task_count(self) -> int:
        """How many tasks the file lists."""
        return sum(len(layer.tasks) for layer in self.layers)

    @property
    def tasks(self) -> list[Task]:
        """Every task, group by group."""
        return [task for layer in self.layers for task in layer.tasks]


def layer_of(heading: str) -> str | None:
    """The layer a heading names (``"## 1. Data Layer"`` -> ``"data"``), else ``None``."""
    match = _LAYER_WORD.match(heading.strip().strip("*_ "))
    return _SYNONYMS[match.group(1).lower()] if match else None


def parse_tasks(text: str, path: Path) -> TaskList:
    """Read tasks.md text; the change id defaults to the name of the folder holding ``path``."""
    front, body, problem = split_frontmatter(text)
    directory_id = path.parent.name
    source: Literal["frontmatter", "directory"] = "directory"
    for key in _ID_KEYS if problem is None and front else ():
        declared = front.get(key) if front else None
        if declared in (None, ""):
            continue
        if str(declared) != directory_id:
            raise BadInputError(
                f"{path}{_key_place(text, key)}: frontmatter {key} {str(declared)!r} does not "
                f"match its change folder {directory_id!r}; fix the frontmatter"
            )
        source = "frontmatter"
    first_line = len(split_lines(text[: len(text) - len(body)]))  # the body is a suffix
    layers, order = _group(body, first_line)
    return TaskList(directory_id, source, layers, order)


def _key_place(text: str, key: str) -> str:
    """``:line:column`` of the value of the top-level frontmatter ``key`` in ``text``."""
    for number, line in enumerate(split_lines(text)[1:], 2):
        if line.strip() == "---":
            break
        found = re.match(rf"{re.escape(key)}\s*:\s*", line)
        if found is not None:
            return f":{number}:{found.end() + 1}"
    return ""


def _group(body: str, first_line: int) -> tuple[tuple[Layer, ...], TaskOrder]:
    parsed = outline(body)
    entries, task_heading_lines = find_tasks(parsed)
    if not entries:
        return (), "document"
    structure = [h for h in parsed.headings if h.line not in task_heading_lines]
    heads = _section_heads(entries, structure)
    tasks = [_task(entry, first_line) for entry in entries]
    sections: dict[int | None, list[Task]] = {}
    for head, task in zip(heads, tasks, strict=True):
        sections.setdefault(head, []).append(task)
    titled = {index: structure[index].title for index in sections if index is not None}
    if len(titled) == len(sections) and all(layer_of(t) for t in titled.values()):
        return _by_layer(sections, titled), "layers"
    groups: list[Layer] = []
    used: set[str] = set()
    for index, members in sections.items():
        title = titled.get(index, "Tasks") if index is not None else "Tasks"
        key = _unique(_slug(title) or f"section-{len(groups) + 1}", used)
        groups.append(Layer(key, [title] if index is not None else [], members, title))
    return tuple(groups), "document"


def _section_heads(entries: list[TaskEntry], headings: list[Heading]) -> list[int | None]:
    """For each task, the index of the heading of its group (``None``: before any heading)."""
    chains: list[tuple[int, ...]] = []
    stack: list[int] = []
    position = 0
    for entry in entries:
        while position < len(headings) and headings[position].line <= entry.line:
            while stack and headings[stack[-1]].level >= headings[position].level:
                stack.pop()
            stack.append(position)
            position += 1
        chains.append(tuple(stack))
    for level in sorted({h.level for h in headings}):
        heads = [_at(chain, headings, level) for chain in chains]
        if len(set(heads)) >= 2:
            return heads
    common = chains[0]
    for chain in chains[1:]:
        same = 0
        while same < min(len(common), len(chain)) and common[same] == chain[same]:
            same += 1
        common = common[:same]
    return [common[-1] if common else None] * len(entries)


def _at(chain: tuple[int, ...], headings: list[Heading], level: int) -> int | None:
    found = None
    for index in chain:
        if headings[index].level <= level:
            found = index
    return found


def _by_layer(sections: dict[int | None, list[Task]], titles: dict[int, str]) -> tuple[Layer, ...]:
    layers: dict[str, Layer] = {}
    for index, members in sections.items():
        assert index is not None
        key = layer_of(titles[index]) or "other"
        layer = layers.setdefault(key, Layer(key))
        layer.headings.append(titles[index])
        layer.tasks.extend(members)
    return tuple(layers[key] for key in LAYER_ORDER if key in layers)


def _task(entry: TaskEntry, first_line: int) -> Task:
    line = entry.line + first_line + 1
    return Task(entry.text, entry.done, line, entry.id, entry.parallel, entry.story)


def _slug(title: str) -> str:
    """``Phase 1: Setup (Shared Infrastructure)`` -> ``phase-1-setup-shared-infrastructure``."""
    slug = ""
    for word in re.findall(r"[a-z0-9]+", title.lower()):
        if slug and len(slug) + 1 + len(word) > 48:
            break
        slug = f"{slug}-{word}" if slug else word[:48]
    return slug


def _unique(key: str, used: set[str]) -> str:
    candidate, number = key, 2
    while candidate in used:
        candidate, number = f"{key}-{number}", number + 1
    used.add(candidate)
    return candidate


def read_tasks(path: Path) -> TaskList:
    """Read the tasks.md at ``path`` (NotFoundError if absent)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"{path} does not exist; plan the change first") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot read tasks ({exc})") from None
    return parse_tasks(text, path)


def ensure_change_id(path: Path, change_id: str) -> str | None:
    """Make tasks.md's frontmatter carry ``change_id`` (WF-R3 step 3); return what was fixed.

    The agent is asked to write it; code makes sure of it. Other frontmatter
    keys are kept; an agentd-style ``id:`` naming another change is corrected
    too. ``None`` when nothing needed fixing.
    """
    text = path.read_text(encoding="utf-8")
    front, body, problem = split_frontmatter(text)
    if front is not None and front.get("change_id") == change_id and _id_agrees(front, change_id):
        return None
    if front is None:
        data: dict[str, Any] = {"change_id": change_id}
        reason = f"replaced unreadable frontmatter ({problem})" if problem else "added frontmatter"
        # Unreadable frontmatter is kept in the body, so nothing the agent wrote is lost.
        new_body = text if problem else body
    else:
        previous = front.get("change_id")
        data = {"change_id": change_id, **{k: v for k, v in front.items() if k != "change_id"}}
        reasons = []
        if previous != change_id:
            reasons.append(
                f"change_id was {previous!r}" if previous is not None else "added change_id"
            )
        if not _id_agrees(front, change_id):
            reasons.append(f"id was {front['id']!r}")
            data["id"] = change_id
        reason = "; ".join(reasons)
        new_body = body
    atomic_write_text(path, join_frontmatter(data, new_body))
    return reason


def _id_agrees(front: dict[str, Any], change_id: str) -> bool:
    return front.get("id") in (None, "") or str(front["id"]) == change_id
