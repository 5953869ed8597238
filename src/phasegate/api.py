"""A small programmatic facade over the engine, for scripts and users' own tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.agents.base import Backend
from phasegate.config import Config, find_repo, load_config
from phasegate.engine.dispatch import Backends
from phasegate.engine.runner import Asker, Runner, RunOptions, RunOutcome
from phasegate.engine.status import item_status
from phasegate.engine.workitem import EventSink, WorkItem, create_item, locate_item
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
    ) -> WorkItem:
        """Create a work item (``phasegate new``)."""
        loaded = self.registry.get(workflow)
        return create_item(self.root, name, loaded, self.config, mode=mode, description=description)

    def item(self, name: str, workflow: str | None = None) -> WorkItem:
        """The handle of an existing work item."""
        return locate_item(self.root, name, self.registry, self.config, workflow)

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
        item = self.item(name)
        item.sink = sink
        return Runner(item, Backends(self.config, self.root, backends), asker, options).run()

    def status(self, name: str) -> dict[str, Any]:
        """What ``phasegate status NAME --json`` prints."""
        item = self.item(name)
        return item_status(item, item.load())


def open_repo(path: str | Path = ".") -> Repo:
    """Open the repository at or above ``path`` with its ``.phasegate/config.yaml``."""
    root = find_repo(Path(path))
    return Repo(root, load_config(root))
