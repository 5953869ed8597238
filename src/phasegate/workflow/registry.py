"""Find workflows: the built-in ones shipped in the package and a repo's own."""

from __future__ import annotations

from pathlib import Path

from phasegate.errors import NotFoundError
from phasegate.workflow.loader import LoadedWorkflow, load_workflow

BUILTIN_DIR = Path(__file__).parent / "builtin"
REPO_WORKFLOWS = Path(".phasegate") / "workflows"
REPO_PROMPTS = Path(".phasegate") / "prompts"


class WorkflowRegistry:
    """Built-in workflows plus ``.phasegate/workflows/*.yaml`` of a repository.

    A repo workflow with a built-in's name replaces it. Prompt templates in
    ``.phasegate/prompts/<workflow>/`` override the shipped ones file by file.
    """

    def __init__(self, repo_root: Path | None = None) -> None:
        self.repo_root = repo_root
        self._cache: dict[str, LoadedWorkflow] = {}

    def files(self) -> dict[str, tuple[Path, str]]:
        """Workflow name -> (file, source), repo files shadowing built-ins."""
        found: dict[str, tuple[Path, str]] = {
            p.stem: (p, "built-in") for p in sorted(BUILTIN_DIR.glob("*.yaml"))
        }
        if self.repo_root is not None:
            for path in sorted((self.repo_root / REPO_WORKFLOWS).glob("*.yaml")):
                found[path.stem] = (path, "repo")
        return found

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
        loaded = load_workflow(path, source, overrides)
        self._cache[name] = loaded
        return loaded
