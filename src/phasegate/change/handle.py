"""A change: its folder, STATE.yaml, journal and locks, on the engine's WorkItem.

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
from typing import Any

from phasegate.change.phases import ChangePhase
from phasegate.change.state import ChangeState
from phasegate.config import Config
from phasegate.engine.workitem import EventSink, WorkItem, items_dir, validate_item_name
from phasegate.errors import BadInputError, NotFoundError
from phasegate.state.journal import utc_now
from phasegate.state.store import parse_state
from phasegate.workflow.loader import LoadedWorkflow
from phasegate.workflow.registry import WorkflowRegistry

WORKFLOW = "change"
ARCHIVE_DIR = "archive"
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}-(.+)$")


@dataclass
class Change:
    """Paths and durable storage of one change (it may not exist yet)."""

    item: WorkItem

    @property
    def id(self) -> str:
        return self.item.name

    @property
    def repo(self) -> Path:
        return self.item.repo

    @property
    def config(self) -> Config:
        return self.item.config

    @property
    def loaded(self) -> LoadedWorkflow:
        return self.item.loaded

    @property
    def dir(self) -> Path:
        return self.item.item_dir

    @property
    def state_path(self) -> Path:
        return self.item.state_path

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
        return self.dir.parent

    @property
    def living_specs_dir(self) -> Path:
        return self.changes_root.parent / "specs"

    @property
    def archive_root(self) -> Path:
        return self.changes_root / ARCHIVE_DIR

    def rel(self, path: Path) -> str:
        """``path`` relative to the repository (how messages and agents name files)."""
        try:
            return str(path.relative_to(self.repo))
        except ValueError:
            return str(path)

    def exists(self) -> bool:
        return self.state_path.is_file()

    def load(self) -> ChangeState:
        if not self.exists():
            raise NotFoundError(
                f"change {self.id!r} has no state file at {self.rel(self.state_path)}"
            )
        return ChangeState.from_document(self.item.store.load(), self.state_path)

    def load_archived(self) -> ChangeState | None:
        """The state of this change in the archive, if it was archived."""
        where = self.archived_path()
        if where is None:
            return None
        path = where / self.item.workflow.state_file
        return ChangeState.from_document(parse_state(path.read_bytes(), path, "yaml"), path)

    def save(self, state: ChangeState) -> None:
        """Commit STATE.yaml atomically (journal flushed first)."""
        state.updated = utc_now()
        self.item.journal.sync()
        self.item.store.commit(state.to_document())

    def record(self, event: str, *, sync_now: bool = False, **data: Any) -> dict[str, Any]:
        return self.item.record(event, sync_now=sync_now, **data)

    def move(self, state: ChangeState, target: ChangePhase, detail: str = "") -> None:
        """Move ``state`` along one of seed 002's transitions and journal it (not saved yet)."""
        previous = state.phase
        record = state.move(target, detail)
        self.record("phase.changed", from_phase=previous.value, to=target.value, cause=record.cause)

    def spec_files(self) -> list[str]:
        """The change's spec files, relative to its specs/ folder (``auth.md``, ``api/v1.md``)."""
        if not self.specs_dir.is_dir():
            return []
        return sorted(
            p.relative_to(self.specs_dir).as_posix()
            for p in self.specs_dir.rglob("*.md")
            if p.is_file()
        )

    def archived_path(self) -> Path | None:
        """Where this change was archived, if it was (the newest if the id was reused)."""
        if not self.archive_root.is_dir():
            return None
        found = sorted(
            p
            for p in self.archive_root.iterdir()
            if (p / self.item.workflow.state_file).is_file()
            and (m := _DATED.match(p.name)) is not None
            and m.group(1) == self.id
        )
        return found[-1] if found else None

    def remove_stale_temp_files(self) -> None:
        """Temp files an atomic write left when a process died (we hold the change's lock)."""
        for name in (self.item.workflow.state_file, "REVIEW.md", "proposal.md", "tasks.md"):
            for stale in self.dir.glob(f".{name}.tmp-*"):
                stale.unlink(missing_ok=True)


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


def open_change(
    repo: Path,
    change_id: str,
    config: Config,
    registry: WorkflowRegistry | None = None,
    sink: EventSink | None = None,
) -> Change:
    """The handle of change ``change_id`` in ``repo`` (which may not exist yet)."""
    validate_item_name(change_id)
    if change_id == ARCHIVE_DIR:
        raise BadInputError(f"{ARCHIVE_DIR!r} cannot be a change id: it names the archive folder")
    loaded = (registry or WorkflowRegistry(repo)).get(WORKFLOW)
    return Change(WorkItem(repo, change_id, loaded, config, sink=sink))


def list_changes(repo: Path, config: Config, registry: WorkflowRegistry | None = None) -> list[str]:
    """The ids of the changes in the changes root (archived ones excluded)."""
    loaded = (registry or WorkflowRegistry(repo)).get(WORKFLOW)
    root = repo / items_dir(loaded.workflow, config)
    return sorted(
        p.parent.name
        for p in root.glob(f"*/{loaded.workflow.state_file}")
        if p.parent.name != ARCHIVE_DIR
    )
