"""Files-in-JSON: how a model that cannot edit files itself changes the work tree.

A writer on a chat-only backend answers with one JSON object::

    {"summary": "what was done",
     "files": [{"path": "docs/features/x/spec.md", "content": "# Spec\\n..."}],
     "delete": ["old.txt"]}

``path`` is relative to the working directory and ``content`` is the whole
new file. phasegate checks every path before writing anything, and refuses:

* empty paths, NUL bytes, ``..`` components and anything inside ``.git``;
* absolute paths, except inside a folder the engine granted the call
  (``AgentRequest.extra_dirs``: the work item folder when it lies outside the
  work tree);
* paths that leave the allowed folders through a symlink.

Files are written atomically (temp file and rename in the same folder), so a
symlink at the target is replaced, never written through.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from phasegate.agents.schema import strict_json_schema

#: Upper bounds on one reply, so a runaway model cannot fill the disk.
MAX_FILES = 200
MAX_FILE_BYTES = 2 * 1024 * 1024


class UnsafePath(ValueError):
    """A path in a files-in-JSON reply that phasegate refuses to touch."""


class FileEdit(BaseModel):
    """One file to create or replace, with its complete content."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Checked when applied (target_path), not here: an empty or escaping path then
    # refuses the whole reply naming it, and the generated schema keeps to what
    # strict structured-output servers accept (no minLength).
    path: str
    content: str


class FileEdits(BaseModel):
    """A writer's files-in-JSON reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    summary: str = ""
    files: list[FileEdit] = Field(default_factory=list, max_length=MAX_FILES)
    delete: list[str] = Field(default_factory=list, max_length=MAX_FILES)


#: The schema handed to the model, generated from :class:`FileEdits` (strict-mode ready).
FILE_EDITS_SCHEMA: dict[str, Any] = strict_json_schema(FileEdits)


def protocol_text(workdir: Path, extra_dirs: Sequence[Path]) -> str:
    """The instructions that tell a chat model how to answer with file edits."""
    granted = "".join(f"\n- {d}" for d in extra_dirs)
    also = (
        f"\nAbsolute paths are accepted only inside these folders:{granted}" if extra_dirs else ""
    )
    return (
        "You cannot run tools or edit files yourself. To create or change files, answer "
        "with only one JSON object of this form:\n\n"
        '{"summary": "<what you did, briefly>", '
        '"files": [{"path": "<path relative to the working directory>", '
        '"content": "<the complete new content of the file>"}], '
        '"delete": ["<path of a file to delete>"]}\n\n'
        f"The working directory is {workdir}. Give each file's complete content, not a diff. "
        "Paths must stay inside the working directory: '..' and the .git folder are refused."
        f"{also}"
    )


def target_path(raw: str, workdir: Path, extra_dirs: Sequence[Path] = ()) -> Path:
    """Where ``raw`` points, after checking it stays inside the allowed folders."""
    if not raw or "\x00" in raw:
        raise UnsafePath(f"path {raw!r} is empty or contains a NUL byte")
    pure = PurePosixPath(raw.replace("\\", "/"))
    if ".." in pure.parts:
        raise UnsafePath(f"path {raw!r} contains '..'")
    if ".git" in pure.parts:
        raise UnsafePath(f"path {raw!r} is inside a .git folder")
    root = workdir.resolve()
    granted = [d.resolve() for d in extra_dirs]
    if pure.is_absolute():
        candidate = Path(str(pure))
        allowed = granted
        if not any(_within(candidate, base) for base in granted):
            raise UnsafePath(f"path {raw!r} is absolute; give a path relative to the work tree")
    else:
        candidate = root / Path(*pure.parts)
        allowed = [root, *granted]
    # resolve() follows every symlink on the way: a link that leads out is refused.
    real = candidate.parent.resolve() / candidate.name
    if not any(_within(real, base) for base in allowed):
        raise UnsafePath(f"path {raw!r} leaves the work tree through a symlink")
    if real.is_dir() and not real.is_symlink():
        raise UnsafePath(f"path {raw!r} is a directory")
    return real


def _within(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def apply_edits(edits: FileEdits, workdir: Path, extra_dirs: Sequence[Path] = ()) -> list[str]:
    """Write and delete the files of ``edits``; every path is checked before any change.

    Returns the changed paths as given. Raises :class:`UnsafePath` (nothing
    written) when any path is refused or a file is too large.
    """
    writes = [(edit.path, target_path(edit.path, workdir, extra_dirs)) for edit in edits.files]
    deletes = [(raw, target_path(raw, workdir, extra_dirs)) for raw in edits.delete]
    for edit in edits.files:
        if len(edit.content.encode("utf-8")) > MAX_FILE_BYTES:
            raise UnsafePath(f"file {edit.path!r} is larger than {MAX_FILE_BYTES} bytes")
    changed: list[str] = []
    for (raw, target), edit in zip(writes, edits.files, strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(target, edit.content)
        changed.append(raw)
    for raw, target in deletes:
        if target.is_file() or target.is_symlink():
            target.unlink()
            changed.append(raw)
    return changed


def _write_atomic(target: Path, content: str) -> None:
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.tmp-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(content)
        # mkstemp creates 0600; keep an existing file's mode, else the usual 0644.
        mode = target.stat().st_mode & 0o777 if target.is_file() else 0o644
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
