"""A validated workflow and where it came from (kept apart from the loader, which pulls in
the YAML parser and the graph checks: a workflow read from the cache needs neither)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phasegate.errors import WorkflowError
from phasegate.workflow.model import Workflow
from phasegate.workflow.prompts import find_template


@dataclass(frozen=True)
class LoadedWorkflow:
    """A validated workflow and where it came from."""

    workflow: Workflow
    path: Path
    source: str  # "built-in" or "repo"
    prompt_path: tuple[Path, ...]

    @property
    def name(self) -> str:
        return self.workflow.name

    def template(self, name: str) -> Path:
        """The file of prompt template ``name`` (validated to exist on load)."""
        found = find_template(name, self.prompt_path)
        if found is None:  # pragma: no cover - load() guarantees it
            raise WorkflowError(f"{self.path}: prompt template {name!r} not found")
        return found
