"""PLAN.md as people write it: phases, checkbox tasks, their metadata and checkpoints.

Two layouts of the-startup's plans are read:

- **phase headings** (seed 004's spec): each heading whose text starts with
  "Phase" is a phase; the checkbox items at the top of its lists are its
  tasks; a paragraph ``**Execution: Parallel**`` (or ``Sequential``) marks it;
- **phase items** (the later template): under other headings, a top-level
  checkbox item holding checkbox items is a phase, and those items are its tasks.

Anything nested in a task (subtasks, notes, code) is part of the task. A task
whose title is ``**Validation**`` / ``**Validate**`` is the phase's validation
checkpoint, not delegated. A checkbox item outside any phase (a "Completion
Criteria" list) is reported as not a task. Tasks already ticked are done.

**Task hashes** are made from the task's own title (checkbox, metadata and
emphasis removed, white space collapsed); the second and later tasks with the
same title add their position among those. So editing, adding or moving other
tasks, phases or text leaves a task's hash as it is.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.errors import BadInputError, NotFoundError
from phasegate.implement.metadata import TaskMetadata, read_metadata, strip_metadata
from phasegate.implement.outline import Block, ListItem, outline, walk

_PHASE_HEADING = re.compile(r"^\W*phase\b", re.I)
_EXECUTION = re.compile(r"^\W*execution\W*:?\W*(?P<how>parallel|sequential)\b", re.I)
# "**Validation**: ...", "**Validate**", "T000.3 Validate" (but not "Validate the input").
_CHECKPOINT = re.compile(r"^(?:[A-Z]+\d+(?:\.\d+)*\s+)?validat(?:e|ion)\s*(?::|$)", re.I)
_BOLD = re.compile(r"(\*\*|__)(.+?)\1")


@dataclass(frozen=True)
class PlanProblem:
    """Something wrong or doubtful in the plan, at a 1-based line."""

    line: int
    message: str
    error: bool = False
    #: 1-based, where the line's problem starts (metadata written wrong): ``None``, the line.
    column: int | None = None

    def at(self, where: str) -> str:
        """``where:LINE: message``, or ``where:LINE:COLUMN: message`` with a column."""
        column = f":{self.column}" if self.column is not None else ""
        return f"{where}:{self.line}{column}: {self.message}"


@dataclass(frozen=True)
class PlanTask:
    """One checkbox task (or validation checkpoint) of the plan."""

    key: str
    title: str
    line: int
    done: bool
    phase: str
    agent: str | None = None
    review: bool = True
    review_focus: tuple[str, ...] = ()
    parallel: bool = False
    checkpoint: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    details: str = ""
    #: The 1-based line on which the task's own text ends (its sub-items follow).
    text_end: int = 0
    #: ``LINE:COLUMN`` (1-based) of its ``agent`` metadata, or its line alone.
    agent_at: str = ""

    def data(self) -> dict[str, Any]:
        """The task as a foreach item's data (JSON-ready)."""
        return {
            "phase": self.phase,
            "agent": self.agent,
            "review": self.review,
            "review_focus": list(self.review_focus),
            "checkpoint": self.checkpoint,
            "metadata": dict(self.metadata),
            "details": self.details,
        }


@dataclass(frozen=True)
class PlanPhase:
    """A phase: its tasks in order, its validation checkpoints, whether it runs in parallel."""

    key: str
    title: str
    line: int
    parallel: bool
    tasks: tuple[PlanTask, ...]
    checkpoints: tuple[PlanTask, ...]
    #: The phase's own checkbox (the phase-items layout), 1-based; ``None`` for a heading.
    checkbox_line: int | None = None
    checked: bool = False

    @property
    def done(self) -> bool:
        return all(t.done for t in (*self.tasks, *self.checkpoints))


@dataclass(frozen=True)
class Plan:
    """A parsed PLAN.md."""

    path: Path
    phases: tuple[PlanPhase, ...]
    problems: tuple[PlanProblem, ...]

    def tasks(self) -> list[PlanTask]:
        return [t for p in self.phases for t in (*p.tasks, *p.checkpoints)]

    def task(self, key: str) -> PlanTask | None:
        return next((t for t in self.tasks() if t.key == key), None)

    def phase(self, key: str) -> PlanPhase | None:
        return next((p for p in self.phases if p.key == key), None)

    def notes(self, where: str) -> list[str]:
        """The warnings, as ``where:LINE: message``."""
        return [p.at(where) for p in self.problems if not p.error]

    def raise_errors(self, where: str) -> None:
        """Stop (exit 2) with every error of the plan, each as ``where:LINE: message``
        (``where:LINE:COLUMN: message`` where a column is known)."""
        errors = [p.at(where) for p in self.problems if p.error]
        if errors:
            raise BadInputError("; ".join(errors))


def source_lines(text: str) -> list[str]:
    """``text``'s lines as markdown counts them (``\\r\\n``, ``\\r`` and ``\\n`` end a line)."""
    lines = re.split(r"\r\n|\r|\n", text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def task_title(item: ListItem) -> str:
    """A task's title: its text without checkbox, metadata and emphasis markers."""
    return " ".join(_BOLD.sub(r"\2", strip_metadata(item.label)).split()).rstrip(" :")


def task_hash(title: str, occurrence: int) -> str:
    """The stable key of the ``occurrence``-th (1-based) task titled ``title``."""
    source = title if occurrence == 1 else f"{title}#{occurrence}"
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48] or "phase"


class _Builder:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.problems: list[PlanProblem] = []
        self.titles: dict[str, int] = {}
        self.first_line: dict[str, int] = {}
        self.slugs: dict[str, int] = {}
        self.phases: list[PlanPhase] = []

    def phase_key(self, title: str) -> str:
        slug = _slug(title)
        self.slugs[slug] = self.slugs.get(slug, 0) + 1
        return slug if self.slugs[slug] == 1 else f"{slug}-{self.slugs[slug]}"

    def spot(self, item: ListItem, meta: TaskMetadata, message: str) -> tuple[int, int | None]:
        """The 1-based line and column of the metadata span ``message`` is about (a task's
        first paragraph may run over lines), else the task's line and no column."""
        return self.locate(item, meta.spans.get(message))

    def locate(self, item: ListItem, span: str | None) -> tuple[int, int | None]:
        """Where ``span`` is in ``item``'s first paragraph (else its line, no column)."""
        last = item.text_lines[1] if item.text_lines else item.line + 1
        if span:
            for index in range(item.line, max(last, item.line + 1)):
                if index < len(self.lines) and (found := self.lines[index].find(span)) >= 0:
                    return index + 1, found + 1
        return item.line + 1, None

    def details(self, item: ListItem) -> str:
        start = item.text_lines[1] if item.text_lines else item.line + 1
        body = self.lines[start : item.end]
        while body and not body[-1].strip():
            body.pop()
        indent = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
        return "\n".join(x[indent:] for x in body)

    def task(self, item: ListItem, phase: str, phase_parallel: bool) -> PlanTask:
        line = item.line + 1
        title = task_title(item)
        self.titles[title] = self.titles.get(title, 0) + 1
        meta = read_metadata(item.text or "")
        for message in [*meta.errors, *meta.warnings]:
            at, column = self.spot(item, meta, message)
            self.problems.append(
                PlanProblem(at, message, error=message in meta.errors, column=column)
            )
        if not title:
            self.problems.append(PlanProblem(line, "a task without a title", error=True))
        elif self.titles[title] > 1:
            first = self.first_line[title]
            self.problems.append(
                PlanProblem(
                    line,
                    f"task {title!r} has the title of the task at line {first}: a task is "
                    "known by its title, so moving or removing one of them makes the other "
                    "take its place (its state, its review cycles); give each its own title",
                )
            )
        self.first_line.setdefault(title, line)
        parallel = meta.parallel if meta.parallel is not None else phase_parallel
        return PlanTask(
            key=task_hash(title, self.titles[title]),
            title=title,
            line=line,
            done=item.checkbox == "x",
            phase=phase,
            agent=meta.agent,
            review=meta.review if meta.review is not None else True,
            review_focus=meta.review_focus,
            parallel=bool(parallel),
            checkpoint=bool(_CHECKPOINT.match(title)),
            metadata=dict(meta.values),
            details=self.details(item),
            text_end=item.text_lines[1] if item.text_lines else line,
            agent_at=":".join(str(n) for n in self.locate(item, meta.agent_span) if n),
        )

    def add_phase(
        self,
        title: str,
        line: int,
        items: list[ListItem],
        parallel: bool,
        owner: ListItem | None = None,
    ) -> None:
        key = self.phase_key(title)
        found = [self.task(i, key, parallel) for i in items]
        self.phases.append(
            PlanPhase(
                key=key,
                title=title,
                line=line,
                parallel=parallel,
                tasks=tuple(t for t in found if not t.checkpoint),
                checkpoints=tuple(t for t in found if t.checkpoint),
                checkbox_line=owner.line + 1 if owner is not None else None,
                checked=owner is not None and owner.checkbox == "x",
            )
        )

    def outside(self, items: list[ListItem], where: str) -> None:
        for item in items:
            if item.checkbox is not None and item.depth == 1:
                self.problems.append(
                    PlanProblem(
                        item.line + 1, f"checkbox outside any phase ({where}) is not a task"
                    )
                )


def parse_plan(text: str, path: Path) -> Plan:
    """Read PLAN.md's text into phases and tasks, with every problem found."""
    builder = _Builder(source_lines(text))
    blocks = outline(text)
    phase: tuple[str, int, int] | None = None  # title, line, heading level
    parallel = False
    pending: list[ListItem] = []
    section = "before any heading"

    def close() -> None:
        nonlocal pending
        if phase is not None:
            builder.add_phase(phase[0], phase[1], pending, parallel)
        pending = []

    for block in blocks:
        if block.kind == "heading":
            assert block.heading is not None
            heading = block.heading
            if _PHASE_HEADING.match(heading.text):
                close()
                phase, parallel = (heading.text, heading.line + 1, heading.level), False
            elif phase is None or heading.level <= phase[2]:
                close()
                phase = None
                section = f"under {heading.text!r}"
        elif block.kind == "paragraph" and phase is not None:
            marker = _EXECUTION.match(block.text)
            if marker:
                parallel = marker.group("how").lower() == "parallel"
        elif block.kind == "list" and phase is not None:
            pending += [i for i in block.items if i.checkbox is not None]
        elif block.kind == "list":
            _item_phases(builder, block, section)
    close()
    if not any(p.tasks or p.checkpoints for p in builder.phases):
        outside = sum(1 for p in builder.problems if p.message.startswith("checkbox outside"))
        hint = (
            f" ({outside} checkbox item(s) outside any phase: tasks go under a "
            "'## Phase N: ...' heading, or inside a top-level checkbox item that is a phase)"
            if outside
            else ""
        )
        builder.problems.append(PlanProblem(1, f"the plan lists no tasks{hint}", error=True))
    return Plan(path, tuple(builder.phases), tuple(builder.problems))


def _item_phases(builder: _Builder, block: Block, section: str) -> None:
    """The phase-items layout: a top-level checkbox item holding checkbox items."""
    for item in block.items:
        if item.checkbox is not None and item.checkbox_children():
            meta = read_metadata(item.text or "")
            builder.add_phase(
                task_title(item), item.line + 1, item.checkbox_children(), bool(meta.parallel), item
            )
        else:
            builder.outside([item], section)


def read_plan(path: Path, where: str | None = None) -> Plan:
    """Parse the PLAN.md at ``path``; a missing file or an error in it stops (exit 2)."""
    shown = where or str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise NotFoundError(
            f"{shown}: no such file; the implement workflow needs a PLAN.md"
        ) from None
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{shown}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise BadInputError(f"{shown}: cannot be read ({exc.strerror})") from None
    plan = parse_plan(text, path)
    plan.raise_errors(shown)
    return plan


__all__ = ["Plan", "PlanPhase", "PlanProblem", "PlanTask", "parse_plan", "read_plan", "walk"]
