"""A small programmatic facade over the engine, for scripts and users' own tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.agents.base import Backend
from phasegate.config import Config, find_repo, load_config
from phasegate.engine.answers import answer_decision, pending, with_journaled_answers
from phasegate.engine.calls import Backends
from phasegate.engine.item import EventSink, WorkItem
from phasegate.engine.item_status import status_of as status_of
from phasegate.engine.items import create_item, locate_item
from phasegate.engine.runner import Runner, RunOptions, RunOutcome
from phasegate.engine.state import EngineState
from phasegate.engine.walk import Asker
from phasegate.workflow.registry import WorkflowRegistry


@dataclass
class Repo:
    """A repository phasegate works in."""

    root: Path
    config: Config = field(default_factory=Config)

    def __post_init__(self) -> None:
        self.registry = WorkflowRegistry(self.root)

    def new(
        self,
        name: str,
        *,
        workflow: str = "feature",
        mode: str | None = None,
        description: str = "",
        data: Mapping[str, Any] | None = None,
    ) -> WorkItem:
        """Create a work item (``phasegate new``)."""
        loaded = self.registry.get(workflow)
        return create_item(
            self.root, name, loaded, self.config, mode=mode, description=description, data=data
        )

    def item(self, name: str, workflow: str | None = None, command: str | None = None) -> WorkItem:
        """The handle of an existing work item."""
        return locate_item(self.root, name, self.registry, self.config, workflow, command=command)

    def run(
        self,
        name: str,
        *,
        backends: Mapping[str, Backend] | None = None,
        options: RunOptions | None = None,
        asker: Asker | None = None,
        sink: EventSink | None = None,
    ) -> RunOutcome:
        """Run (or resume) a work item (``phasegate run``); ``backends`` override config."""
        item = self.item(name, command=options.command if options else None)
        item.sink = sink
        return Runner(item, Backends(self.config, self.root, backends), asker, options).run()

    def status(self, name: str) -> dict[str, Any]:
        """What ``phasegate status NAME --json`` prints."""
        item = self.item(name, command="status")
        return status_of(item, item.load(read_journal=False))

    def state(self, name: str) -> EngineState:
        """The engine state of ``name`` as committed."""
        return self.item(name, command="status").load(read_journal=False)

    def decisions(self, name: str) -> list[dict[str, Any]]:
        """The pending decisions of ``name`` (``phasegate decisions NAME --json``)."""
        item = self.item(name, command="status")
        return pending(with_journaled_answers(item, item.load()))

    def answer(self, name: str, decision: str, choice: str, note: str = "") -> dict[str, Any]:
        """Answer a pending decision (``phasegate answer``)."""
        return answer_decision(self.item(name, command="answer"), decision, choice, note)


def open_repo(path: str | Path = ".") -> Repo:
    """Open the repository at or above ``path`` with its ``.phasegate/config.yaml``."""
    root = find_repo(Path(path))
    return Repo(root, load_config(root))
