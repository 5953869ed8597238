"""Where a change's files live.

Layout (the changes root is ``changes/`` unless ``workflows.change.items_dir``
in the config says otherwise; the living specs and the archive sit next to
the changes)::

    specs/                     living specs
    changes/<change-id>/       STATE.yaml, proposal.md, specs/*.md, tasks.md, REVIEW.md
    changes/archive/<date>-<change-id>/
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from phasegate.engine.plugin_api import PluginContext

ARCHIVE_DIR = "archive"
STATE_FILE = "STATE.yaml"
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}-(.+)$")


@dataclass(frozen=True)
class ChangePaths:
    """The files of one change (in its folder under the changes root, or in the archive)."""

    repo: Path
    id: str
    dir: Path

    @property
    def state_path(self) -> Path:
        return self.dir / STATE_FILE

    @property
    def proposal_path(self) -> Path:
        return self.dir / "proposal.md"

    @property
    def specs_dir(self) -> Path:
        return self.dir / "specs"

    @property
    def tasks_path(self) -> Path:
        return self.dir / "tasks.md"

    @property
    def review_path(self) -> Path:
        return self.dir / "REVIEW.md"

    @property
    def reviews_dir(self) -> Path:
        """Earlier REVIEW.md files, kept when a new review round starts."""
        return self.dir / "reviews"

    @property
    def base_dir(self) -> Path:
        """Living specs as they were when this change began editing them."""
        return self.dir / ".base" / "specs"

    @property
    def changes_root(self) -> Path:
        parent = self.dir.parent
        return parent.parent if parent.name == ARCHIVE_DIR else parent

    @property
    def living_specs_dir(self) -> Path:
        return self.changes_root.parent / "specs"

    @property
    def archive_root(self) -> Path:
        return self.changes_root / ARCHIVE_DIR

    @property
    def archived(self) -> bool:
        return self.dir.parent.name == ARCHIVE_DIR

    def rel(self, path: Path) -> str:
        """``path`` relative to the repository (how messages and agents name files)."""
        try:
            return str(path.relative_to(self.repo))
        except ValueError:
            return str(path)

    def spec_files(self) -> list[str]:
        """The change's spec files, relative to its specs/ folder (``auth.md``, ``api/v1.md``)."""
        if not self.specs_dir.is_dir():
            return []
        return sorted(
            p.relative_to(self.specs_dir).as_posix()
            for p in self.specs_dir.rglob("*.md")
            if p.is_file()
        )


def archived_folder(changes_root: Path, change_id: str) -> Path | None:
    """Where ``change_id`` was archived, if it was (the newest if the id was reused: a
    second archive the same day is ``<date>-<change-id>-2``)."""
    root = changes_root / ARCHIVE_DIR
    if not root.is_dir():
        return None
    found: list[tuple[str, int, Path]] = []
    for p in root.iterdir():
        m = _DATED.match(p.name)
        if m is None or not (p / STATE_FILE).is_file():
            continue
        if m.group(1) == change_id:
            found.append((p.name[:10], 1, p))
            continue
        stem, dash, number = m.group(1).rpartition("-")
        if stem == change_id and dash and number.isdigit() and _state_names(p, change_id):
            found.append((p.name[:10], int(number), p))
    return max(found)[2] if found else None


def _state_names(folder: Path, change_id: str) -> bool:
    """Whether the STATE.yaml of an archived ``folder`` records ``change_id`` (a folder
    ``<date>-a-2`` is change ``a`` archived twice that day, or a change named ``a-2``)."""
    try:
        text = (folder / STATE_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return re.search(rf"^change_id: ['\"]?{re.escape(change_id)}['\"]?\s*$", text, re.M) is not None


def safe_spec_name(raw: str) -> str | None:
    """``raw`` as a spec file name in specs/ (``auth`` -> ``auth.md``); ``None`` if unsafe."""
    name = raw.strip().removeprefix("specs/")
    if not name or name.startswith("/") or "\\" in name:
        return None
    path = PurePosixPath(name if name.endswith(".md") else f"{name}.md")
    if any(part in ("", ".", "..") for part in path.parts):
        return None
    if not all(re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", part) for part in path.parts):
        return None
    return path.as_posix()


def paths_of(ctx: PluginContext) -> ChangePaths:
    """The paths of the change a plug-in runs for."""
    return ChangePaths(ctx.repo, ctx.item.name, ctx.item_dir)
