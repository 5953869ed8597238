"""What plug-ins implement, and the context the engine hands them.

The groups (see :mod:`phasegate.plugins`): item parsers, predicates, reviewer
selectors, actions, state views and context providers. Each built-in one is
registered in ``pyproject.toml`` exactly as a third-party plug-in would be.
Plug-ins never move the workflow themselves: they answer questions (a
predicate), read files (a parser), take one step (an action) or write the
workflow's own files (a view); the engine records and decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate import plugins
from phasegate.errors import WorkflowError

if TYPE_CHECKING:
    # Annotations only: ``phasegate status`` reads a view without the agents' or the
    # verdicts' models.
    from phasegate.agents.base import PromptPart
    from phasegate.engine.item import WorkItem
    from phasegate.engine.state import EngineState
    from phasegate.verdicts.model import Verdict
    from phasegate.workflow.model import AnyNode


@dataclass(frozen=True)
class Task:
    """One item a foreach runs its body for (a task, a spec, a layer of tasks...)."""

    key: str
    title: str = ""
    deps: tuple[str, ...] = ()
    done: bool = False
    line: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    #: The item may run at the same time as the other parallel items next to it.
    parallel: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "deps": list(self.deps),
            "done": self.done,
            "line": self.line,
            "data": dict(self.data),
            "parallel": self.parallel,
        }

    @classmethod
    def from_dict(cls, key: str, data: Mapping[str, Any]) -> Task:
        return cls(
            key=key,
            title=str(data.get("title", "")),
            deps=tuple(data.get("deps") or ()),
            done=bool(data.get("done")),
            line=data.get("line"),
            data=dict(data.get("data") or {}),
            parallel=bool(data.get("parallel")),
        )


@dataclass(frozen=True)
class Parsed:
    """What a parser found: the items, which rule it used, and problems worth journaling."""

    items: tuple[Task, ...]
    rule: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class PluginContext:
    """What a plug-in may look at: the item, its state, where the run stands."""

    item: WorkItem
    state: EngineState
    path: str = ""
    node: AnyNode | None = None
    task: Task | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: The verdict just read (for ``after_verdict`` actions).
    verdict: Verdict | None = None
    #: The review round (``visit.iteration``) of the node, where there is one.
    round: str = ""
    #: Answers given for this run (``--answer ID=CHOICE`` and the flags that alias them).
    answers: Mapping[str, str] = field(default_factory=dict)
    #: Where this node's agents work, when not the item's work tree (a parallel item).
    workspace: Path | None = None

    @property
    def repo(self) -> Path:
        return self.item.repo

    @property
    def item_dir(self) -> Path:
        return self.item.item_dir

    @property
    def workdir(self) -> Path:
        return self.workspace or self.item.workdir(self.state)

    def record(self, event: str, **data: Any) -> None:
        self.item.record(event, node=self.path, **data)


class ItemParser:
    """Reads a file of the item folder into items (tasks, specs, layers...)."""

    name = "parser"
    #: Whether it reads the source's ``file`` (a source naming it without one is refused
    #: when the workflow loads); ``False`` for a parser that finds its own input.
    needs_file: bool = False

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        raise NotImplementedError

    def count(self, path: Path) -> int:
        """How many items ``path`` holds (for an output's ``min_items`` postcondition)."""
        raise NotImplementedError

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        """What is wrong with ``path`` as an output (each a blocker fed back to the executor)."""
        return []

    def example(self, ctx: PluginContext, path: Path) -> str | None:
        """A valid ``path`` the ``auto`` backend may write when smoke-running a workflow."""
        return None


class Predicate:
    """Answers a question about the work item: ``when`` a reviewer runs, a gate's advice."""

    name = "predicate"

    def __call__(self, ctx: PluginContext) -> bool | str | None:
        raise NotImplementedError


@dataclass(frozen=True)
class Selection:
    """The reviewer a selector picked, and why (journaled)."""

    role: str
    reason: str
    focus: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)


class ReviewerSelector:
    """Picks the role that reviews this time (seed 004's dynamic reviewer selection).

    The same protocol picks an agent node's executor at run time (``executor_selector``).
    """

    name = "selector"

    def select(self, ctx: PluginContext, settings: Mapping[str, Any]) -> Selection | None:
        """The chosen reviewer, or ``None`` to skip the review."""
        raise NotImplementedError


class Action:
    """One plug-in step with declared outcomes; it must be safe to run again after a crash."""

    name = "action"
    outcomes: tuple[str, ...] = ("done",)

    def run(self, ctx: PluginContext) -> str:
        raise NotImplementedError

    def replay(self, ctx: PluginContext, outcome: str) -> None:
        """Called instead of :meth:`run` when a resumed run reuses the outcome the journal
        recorded: an action whose effect lives in the engine state (which the crash may have
        lost) applies it again here. Nothing by default."""


class ContextProvider:
    """Adds prompt parts of its own to an agent's prompt (a living spec, context files...)."""

    name = "context"

    def parts(self, ctx: PluginContext, role: str) -> Sequence[PromptPart]:
        raise NotImplementedError


class StateView:
    """Writes a workflow's own files from the engine state, and reads back what people edit.

    ``check`` runs before a run writes anything: a corrupt view file raises
    :class:`~phasegate.errors.StateCorruptError` (and is never overwritten);
    values a person may edit by hand are copied into the engine state.
    """

    name = "view"

    def __init__(self, item: WorkItem, settings: Mapping[str, Any]) -> None:
        self.item = item
        self.settings = settings

    def files(self) -> list[Path]:
        """The files this view writes (phasegate's own: agents may not edit them)."""
        return [self.item.item_dir / name for name in self.file_names(self.settings)]

    @classmethod
    def file_names(cls, settings: Mapping[str, Any]) -> list[str]:
        """The names (in the item folder) of the files this view writes, its state file first."""
        return []

    def watch_call(self, role: str) -> Callable[[], list[str]] | None:
        """Before an agent call of ``role``: what to run once it ended, which puts back what
        that role may not change of the workflow's files and names it (``None``: nothing to
        watch). Whatever it names is a violation, as a change of :meth:`files` is."""
        return None

    def watch_node(self, node: str) -> Callable[[], list[str]] | None:
        """As :meth:`watch_call`, for an agent call (executor or reviewer) of the node at
        ``node`` (its path): what that node may not change of the workflow's files."""
        return None

    def check(self, state: EngineState) -> None:
        """Validate the view's files and copy hand edits into ``state``."""

    def adoptable(self) -> bool:
        """Whether :meth:`adopt` can make a state (a hand-written state file exists in the
        item's folder; an item without a folder is never asked)."""
        return False

    def adopt(self) -> EngineState | None:
        """An engine state made from a hand-written view file, when there is no engine state."""
        return None

    def prepare(self, state: EngineState) -> None:
        """Note in ``state`` what the coming render will write (called before each commit)."""

    def render(self, state: EngineState) -> None:
        """Write the view's files for ``state``."""

    def completed(self, state: EngineState) -> None:
        """The item completed (seed 000's finish deletes the review history)."""

    def status_fields(self, state: EngineState) -> dict[str, Any]:
        """Fields of ``phasegate status`` the workflow's own state decides (e.g. its phase)."""
        return {}

    def summary(self, state: EngineState) -> str | None:
        """The one line a completed item keeps (``None``: the engine's own)."""
        return None


def load_view(item: WorkItem) -> StateView:
    """The state view of ``item``'s workflow, set up with its settings."""
    ref = item.workflow.view
    try:
        cls = plugins.load("views", ref.plugin)
    except plugins.PluginError as exc:
        raise WorkflowError(f"workflow {item.workflow.name!r}: {exc}") from None
    view: StateView = cls(item, ref.with_)
    return view


def view_files(workflow: Any) -> list[str]:
    """The file names (in an item's folder) a workflow's state view writes, its state first."""
    try:
        cls = plugins.load("views", workflow.view.plugin)
    except plugins.PluginError:
        return []
    names = getattr(cls, "file_names", None)
    return list(names(workflow.view.with_)) if callable(names) else []


def plugin(group: str, name: str) -> Any:
    """A plug-in object, a missing one being a workflow error (validate catches it first)."""
    try:
        return plugins.load(group, name)
    except plugins.PluginError as exc:
        raise WorkflowError(str(exc)) from None
