"""Find workflows: the built-in ones shipped in the package and a repo's own."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from phasegate.errors import NotFoundError, PhasegateError, WorkflowError
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
    Each workflow keeps its work items in a folder of its own: a workflow whose
    items folder (its ``items_dir``, or the config's ``workflows.NAME.items_dir``)
    is another's too does not load (WorkflowError naming both, their files and the
    folder), unless the folder holds items of it and of none of the others: then it
    keeps working, and only the others are refused.
    """

    def __init__(self, repo_root: Path | None = None) -> None:
        self.repo_root = repo_root
        self._cache: dict[str, LoadedWorkflow] = {}
        #: Workflow name -> its items folder (normalised), of every workflow that loads.
        self._folders: dict[str, str] | None = None
        #: Workflow name -> the items folder the config sets for it.
        self._overrides: dict[str, str] = {}

    def files(self) -> dict[str, tuple[Path, str]]:
        """Workflow name -> (file, source), repo files shadowing built-ins."""
        return workflow_files(self.repo_root)

    def names(self) -> list[str]:
        return sorted(self.files())

    def get(self, name: str) -> LoadedWorkflow:
        """Load and validate workflow ``name`` (cached); WorkflowError when it does not
        load or shares its items folder with another workflow."""
        loaded = self._load(name)
        problem = self.shared_folder(loaded)
        if problem is not None:
            raise WorkflowError(problem)
        return loaded

    def shared_folder(self, loaded: LoadedWorkflow) -> str | None:
        """The problem (one line) when another workflow of the repository keeps its items
        in ``loaded``'s items folder; ``None`` when the folder is its own.

        ``loaded`` may be read from any file: a workflow of the same name is the one it
        replaces, not another.
        """
        folders = self._items_folders()
        if loaded.name in folders:
            folder = folders[loaded.name]
        else:
            folder = _normalised(self._overrides.get(loaded.name) or loaded.workflow.items_dir)
        others = [n for n, f in folders.items() if f == folder and n != loaded.name]
        if not others:
            return None
        owners = self._owners(folder, [loaded.name, *others])
        if owners == {loaded.name}:
            return None  # its items were there first: the others are refused, not it
        sharing = sorted([loaded.name, *others])
        names = _listed(sharing)
        if loaded.name in self._overrides and self.repo_root is not None:
            from phasegate.config import config_path

            where = f"{config_path(self.repo_root)}: workflows.{loaded.name}.items_dir: "
        else:
            where = f"{_where_items_dir(loaded.path)}items_dir: "
        places = ", ".join(
            f"{n}: {self._folder_set_in(n, loaded)}" for n in sorted([loaded.name, *others])
        )
        keep = "both keep" if len(sharing) == 2 else f"all {len(sharing)} keep"
        said = f"{where}workflows {names} {keep} their work items in {folder!r} ({places}); "
        if owners:
            holders = _listed(sorted(owners))
            key = f"workflows.{loaded.name}.items_dir in .phasegate/config.yaml"
            fix = (
                f"set {key}"
                if loaded.source == "built-in"
                else f"set items_dir in {loaded.path} (or {key})"
            )
            return (
                f"{said}{folder!r} holds items of {holders}, which "
                f"{'keeps' if len(owners) == 1 else 'keep'} it: {fix} to give "
                f"{loaded.name!r} a folder of its own"
            )
        return (
            f"{said}give each a folder of its own with items_dir in the workflow file "
            "(or workflows.NAME.items_dir in .phasegate/config.yaml)"
        )

    def _folder_set_in(self, name: str, loaded: LoadedWorkflow) -> str:
        """Where workflow ``name``'s items folder is set: the config's key, the workflow
        file's ``items_dir`` line, or the file (the default folder)."""
        if name in self._overrides and self.repo_root is not None:
            from phasegate.config import config_path

            return f"{config_path(self.repo_root)} workflows.{name}.items_dir"
        path = loaded.path if name == loaded.name else self.files()[name][0]
        where = _where_items_dir(path).removesuffix(": ")
        return where if where != str(path) else f"{path} by default"

    def _owners(self, folder: str, names: list[str]) -> set[str]:
        """Which of workflows ``names`` have items in ``folder`` (their state names them)."""
        if self.repo_root is None:
            return set()
        import json

        wanted, found = set(names), set()
        for state_file in sorted((self.repo_root / folder).glob("*/.engine.json")):
            try:
                with open(state_file, encoding="utf-8") as handle:
                    workflow = json.load(handle).get("workflow")
            except (OSError, ValueError, AttributeError):
                continue
            if workflow in wanted:
                found.add(workflow)
                if found == wanted:
                    break
        return found

    def _items_folders(self) -> dict[str, str]:
        """Workflow name -> items folder of every workflow that loads (the config's
        ``items_dir`` overrides applied; none is checked while the config does not load)."""
        if self._folders is not None:
            return self._folders
        if self.repo_root is not None:
            from phasegate.config import load_config

            try:
                config = load_config(self.repo_root)
            except PhasegateError:
                self._folders = {}  # the commands that read the config report it
                return self._folders
            self._overrides = {n: s.items_dir for n, s in config.workflows.items() if s.items_dir}
        folders: dict[str, str] = {}
        for name in self.names():
            try:
                workflow = self._load(name).workflow
            except PhasegateError:
                continue  # a workflow that does not load reports its own problem
            folders[name] = _normalised(self._overrides.get(name) or workflow.items_dir)
        self._folders = folders
        return folders

    def _load(self, name: str) -> LoadedWorkflow:
        """Load and validate workflow ``name`` (cached), whatever its items folder."""
        if name in self._cache:
            return self._cache[name]
        files = self.files()
        if name not in files:
            raise NotFoundError(
                f"unknown workflow {name!r} (available: {', '.join(sorted(files))})"
                + self._misnamed(name)
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

    def _misnamed(self, name: str) -> str:
        """A note on a file of the repository's workflows folder that would be workflow
        ``name`` but for its extension (``NAME.yml``: never loaded), else ``""``."""
        if self.repo_root is None:
            return ""
        folder = self.repo_root / REPO_WORKFLOWS
        for suffix in (".yml", ".YAML", ".YML", ".Yaml"):
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                return (
                    f"; {candidate} is not loaded: only NAME.yaml files are workflows "
                    f"(rename it to {name}.yaml)"
                )
        return ""

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


def _listed(names: list[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    quoted = [repr(n) for n in names]
    return " and ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)


def _normalised(folder: str) -> str:
    """``folder`` as one spelling (``./work/``, ``work`` and ``work//`` are one folder)."""
    return PurePosixPath(os.path.normpath(folder.replace("\\", "/"))).as_posix()


_ITEMS_DIR_LINE = re.compile(rb"^items_dir\s*:", re.MULTILINE)


def _where_items_dir(path: Path) -> str:
    """``path:line: `` of the workflow file's ``items_dir`` (``path: `` when it has none)."""
    try:
        text = path.read_bytes()
    except OSError:
        return f"{path}: "
    found = _ITEMS_DIR_LINE.search(text)
    if found is None:
        return f"{path}: "
    line = text.count(b"\n", 0, found.start()) + 1
    return f"{path}:{line}: "
