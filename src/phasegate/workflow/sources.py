"""The files a repository's workflows are made of, found with the standard library only.

A workflow is its YAML file (a built-in one shipped in the package, or the
repository's own ``.phasegate/workflows/NAME.yaml``, which replaces a built-in
of the same name) and the prompt templates of its search path (the
repository's ``.phasegate/prompts/NAME/`` first, then ``prompts/NAME/`` next
to the YAML file). The caches built from workflows (the hooks' layout, the
validated workflows) are keyed on these files, so they are found here without
loading the workflow machinery.
"""

from __future__ import annotations

import os
from pathlib import Path

BUILTIN_DIR = Path(__file__).parent / "builtin"
REPO_WORKFLOWS = Path(".phasegate") / "workflows"
REPO_PROMPTS = Path(".phasegate") / "prompts"
#: The example workflows ``phasegate init --example NAME`` copies (see :mod:`.example_files`).
EXAMPLES_DIR = Path(__file__).parent / "examples"

#: (path relative to the folder, size, modification time in ns) of a file in a folder tree.
FileStamp = tuple[str, int, int]


def example_names() -> list[str]:
    """The example workflows shipped with phasegate."""
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.yaml"))


def workflow_files(repo: Path | None) -> dict[str, tuple[Path, str]]:
    """Workflow name -> (file, source: ``built-in`` or ``repo``), repo files shadowing
    built-ins."""
    found: dict[str, tuple[Path, str]] = {
        p.stem: (p, "built-in") for p in sorted(BUILTIN_DIR.glob("*.yaml"))
    }
    if repo is not None:
        for path in sorted((repo / REPO_WORKFLOWS).glob("*.yaml")):
            found[path.stem] = (path, "repo")
    return found


def prompt_search_path(path: Path, name: str, overrides: Path | None) -> tuple[Path, ...]:
    """Where workflow ``name`` (read from ``path``) finds its prompt templates, in order."""
    search = [path.parent / "prompts" / name]
    if overrides is not None:
        search.insert(0, overrides / name)
    return tuple(search)


def tree_stamp(folder: Path) -> list[FileStamp]:
    """Every file below ``folder`` (symbolic links followed, as reading them does) with its
    size and modification time, sorted; empty when there is no such folder."""
    found: list[FileStamp] = []

    def visit(directory: str, prefix: str, depth: int) -> None:
        try:
            with os.scandir(directory) as entries:
                listed = list(entries)
        except OSError:
            return
        for entry in listed:
            try:
                if entry.is_dir():
                    if depth < 8:  # templates sit a level or two down; a link loop stops here
                        visit(entry.path, f"{prefix}{entry.name}/", depth + 1)
                    continue
                info = entry.stat()
            except OSError:
                continue
            found.append((f"{prefix}{entry.name}", info.st_size, info.st_mtime_ns))

    visit(str(folder), "", 0)
    found.sort()
    return found
