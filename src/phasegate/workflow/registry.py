"""Find workflows: the built-in ones shipped in the package and a repo's own."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from phasegate.errors import NotFoundError
from phasegate.workflow.sources import BUILTIN_DIR as BUILTIN_DIR
from phasegate.workflow.sources import REPO_PROMPTS, prompt_search_path, workflow_files
from phasegate.workflow.sources import REPO_WORKFLOWS as REPO_WORKFLOWS

if TYPE_CHECKING:
    from phasegate.workflow.loaded import LoadedWorkflow


class WorkflowRegistry:
    """Built-in workflows plus ``.phasegate/workflows/*.yaml`` of a repository.

    A repo workflow with a built-in's name replaces it. Prompt templates in
    ``.phasegate/prompts/<workflow>/`` override the shipped ones file by file.
    A workflow that loaded once is read back from the cache of validated
    workflows while nothing it depends on changed (:mod:`phasegate.workflow.cache`).
    """

    def __init__(self, repo_root: Path | None = None) -> None:
        self.repo_root = repo_root
        self._cache: dict[str, LoadedWorkflow] = {}

    def files(self) -> dict[str, tuple[Path, str]]:
        """Workflow name -> (file, source), repo files shadowing built-ins."""
        return workflow_files(self.repo_root)

    def names(self) -> list[str]:
        return sorted(self.files())

    def get(self, name: str) -> LoadedWorkflow:
        """Load and validate workflow ``name`` (cached)."""
        if name in self._cache:
            return self._cache[name]
        files = self.files()
        if name not in files:
            raise NotFoundError(
                f"unknown workflow {name!r} (available: {', '.join(sorted(files))})"
            )
        path, source = files[name]
        overrides = self.repo_root / REPO_PROMPTS if self.repo_root is not None else None
        search = prompt_search_path(path, name, overrides)
        from phasegate.workflow import cache

        # Taken before reading: an entry is never newer than what its key describes.
        key = cache.entry_key(self.repo_root, path, source, search)
        loaded = self._from_cache(key, name, path, source, search)
        if loaded is None:
            from phasegate.workflow.loader import load_workflow_data

            loaded, data = load_workflow_data(path, source, overrides)
            if key is not None:
                cache.remember(name, key, data)
        self._cache[name] = loaded
        return loaded

    def _from_cache(
        self, key: str | None, name: str, path: Path, source: str, search: tuple[Path, ...]
    ) -> LoadedWorkflow | None:
        """Workflow ``name`` from the cache of validated workflows, if it is there under
        ``key``."""
        if key is None:
            return None
        from phasegate.workflow import cache

        data = cache.cached_data(name, key)
        if data is None:
            return None
        from pydantic import ValidationError

        from phasegate.workflow.loaded import LoadedWorkflow
        from phasegate.workflow.model import Workflow

        try:
            workflow = Workflow.model_validate(data)
        except ValidationError:
            return None  # not what was kept: load it in full
        if workflow.name != path.stem:
            return None
        return LoadedWorkflow(workflow, path, source, search)
