"""tasks.md: the change's tasks grouped by implementation layer (WF-R5).

``plan`` makes sure tasks.md starts with YAML frontmatter carrying
``change_id``. ``impl`` copes without it: the change id then comes from the
folder the file is in, and the layers (Data, Logic, Integration, Testing) from
headings such as ``## 1. Data Layer``. Tasks under a heading that names no
layer form an ``other`` group, done after Integration and before Testing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from phasegate.change.frontmatter import join_frontmatter, split_frontmatter
from phasegate.errors import BadInputError, NotFoundError
from phasegate.state.atomic import atomic_write_text

#: The layers in the order ``impl`` works through them.
LAYER_ORDER: tuple[str, ...] = ("data", "logic", "integration", "other", "testing")
LAYER_TITLES = {
    "data": "Data Layer",
    "logic": "Logic Layer",
    "integration": "Integration Layer",
    "other": "Other tasks",
    "testing": "Testing Layer",
}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
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
_TASK = re.compile(r"^\s*(?:[-*+]|\d+(?:\.\d+)*[.)])\s+(?:\[([ xX])\]\s+)?(.+?)\s*$")
_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[([ xX])\]\s+(.+?)\s*$")


@dataclass(frozen=True)
class Task:
    """One task line of tasks.md."""

    text: str
    done: bool
    line: int


@dataclass
class Layer:
    """The tasks of one implementation layer, in document order."""

    key: str
    headings: list[str] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)

    @property
    def title(self) -> str:
        return LAYER_TITLES[self.key]

    @property
    def open_tasks(self) -> list[Task]:
        return [t for t in self.tasks if not t.done]


@dataclass(frozen=True)
class TaskList:
    """tasks.md read: its change id (and where that came from) and its layers in order."""

    change_id: str
    change_id_from: Literal["frontmatter", "directory"]
    layers: tuple[Layer, ...]

    @property
    def task_count(self) -> int:
        return sum(len(layer.tasks) for layer in self.layers)


def layer_of(heading: str) -> str | None:
    """The layer a heading names (``"## 1. Data Layer"`` -> ``"data"``), else ``None``."""
    match = _LAYER_WORD.match(heading.strip().strip("*_ "))
    return _SYNONYMS[match.group(1).lower()] if match else None


def parse_tasks(text: str, path: Path) -> TaskList:
    """Read tasks.md text; the change id defaults to the name of the folder holding ``path``."""
    front, body, problem = split_frontmatter(text)
    directory_id = path.parent.name
    declared = front.get("change_id") if front else None
    if problem is not None or declared in (None, ""):
        change_id, source = directory_id, "directory"
    else:
        change_id, source = str(declared), "frontmatter"
        if change_id != directory_id:
            raise BadInputError(
                f"{path}: frontmatter change_id {change_id!r} does not match its change "
                f"folder {directory_id!r}; fix the frontmatter"
            )
    offset = text.count("\n") - body.count("\n")  # the body is a suffix of the text
    return TaskList(change_id, source, _layers(body, offset))  # type: ignore[arg-type]


def _layers(body: str, offset: int) -> tuple[Layer, ...]:
    layers: dict[str, Layer] = {}
    current: str | None = None
    heading_layer_level = 0
    in_fence = False
    # With checkboxes anywhere, only checkbox items are tasks (other bullets are notes).
    checkboxes_only = any(_CHECKBOX.match(line) for line in body.splitlines())
    for number, raw in enumerate(body.splitlines(), start=offset + 1):
        if raw.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.match(raw)
        if heading:
            level, title = len(heading.group(1)), heading.group(2)
            key = layer_of(title)
            if key is not None:
                current, heading_layer_level = key, level
                layers.setdefault(key, Layer(key)).headings.append(title)
            elif current is not None and level > heading_layer_level:
                pass  # a sub-heading inside a layer stays in that layer
            elif level >= 2:
                current, heading_layer_level = "other", level
                layers.setdefault("other", Layer("other")).headings.append(title)
            else:
                current = None  # the document title
            continue
        task = _task(raw, checkboxes_only)
        if task is None:
            continue
        text, done = task
        layers.setdefault(current or "other", Layer(current or "other")).tasks.append(
            Task(text, done, number)
        )
    return tuple(layers[k] for k in LAYER_ORDER if k in layers and layers[k].tasks)


def _task(raw: str, checkboxes_only: bool) -> tuple[str, bool] | None:
    """A top-level list item (or any checkbox item) is a task; nested bullets are details."""
    if checkboxes_only:
        match = _CHECKBOX.match(raw)
        return (match.group(2), match.group(1).lower() == "x") if match else None
    if raw[:1] in (" ", "\t"):
        return None
    match = _TASK.match(raw)
    if not match:
        return None
    return match.group(2), (match.group(1) or " ").lower() == "x"


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
    keys are kept. ``None`` when nothing needed fixing.
    """
    text = path.read_text(encoding="utf-8")
    front, body, problem = split_frontmatter(text)
    if front is not None and front.get("change_id") == change_id:
        return None
    if front is None:
        data: dict[str, object] = {"change_id": change_id}
        reason = f"replaced unreadable frontmatter ({problem})" if problem else "added frontmatter"
        # Unreadable frontmatter is kept in the body, so nothing the agent wrote is lost.
        new_body = text if problem else body
    else:
        previous = front.get("change_id")
        data = {"change_id": change_id, **{k: v for k, v in front.items() if k != "change_id"}}
        reason = f"change_id was {previous!r}" if previous is not None else "added change_id"
        new_body = body
    atomic_write_text(path, join_frontmatter(data, new_body))
    return reason
