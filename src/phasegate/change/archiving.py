"""``phasegate archive``: merge the change's specs into the living specs, then archive it.

Only a ``complete`` change is archived (WF-R1). Every merge is computed
before anything is written; a true conflict refuses the whole archive with
nothing written or moved. Then the living specs are replaced (atomically,
file by file), STATE.yaml says ``archived``, and the folder is renamed into
the archive. Each step can be repeated, so a run killed half-way is finished
by running ``archive`` again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal

from phasegate.change.handle import Change
from phasegate.change.phases import ChangeNotReady, ChangePhase, not_ready
from phasegate.change.specdelta import SpecDeltaError
from phasegate.change.specfiles import base_text
from phasegate.change.specmerge import merge_spec
from phasegate.change.state import ChangeState
from phasegate.errors import NotFoundError, StateCorruptError
from phasegate.state.atomic import atomic_write_text, fsync_dir


class ArchiveConflict(ChangeNotReady):
    """The change and the living specs both changed the same requirement."""


@dataclass(frozen=True)
class ArchiveOutcome:
    """What ``archive`` did."""

    action: Literal["archived", "already-archived"]
    merged: tuple[str, ...]
    archived_to: Path
    message: str


def archive_change(change: Change, *, resolved: bool = False) -> ArchiveOutcome:
    """Archive ``change``; ``resolved`` takes the change's side of conflicts (merged by hand)."""
    with change.item.run_lock():
        if not change.exists():
            where = change.archived_path()
            if where is None:
                raise NotFoundError(
                    f"no change {change.id!r} in {change.rel(change.changes_root)} or its archive"
                )
            return ArchiveOutcome(
                "already-archived",
                (),
                where,
                f"{change.id} is already archived at {change.rel(where)}",
            )
        change.remove_stale_temp_files()
        state = change.load()
        merged: tuple[str, ...] = ()
        if state.phase is ChangePhase.COMPLETE:
            merged = _merge_specs(change, state, resolved)
            target = _target(change)
            state.archived_to = change.rel(target)
            change.move(state, ChangePhase.ARCHIVED, f"specs merged: {', '.join(merged) or 'none'}")
            change.record(
                "change.archived", to=state.archived_to, specs=list(merged), sync_now=True
            )
            change.save(state)
        elif state.phase is not ChangePhase.ARCHIVED:
            raise not_ready(change.id, state.phase, "archive", "complete changes")
        # Archived but still here: a run stopped between the state commit and the move.
        target = change.repo / (state.archived_to or change.rel(_target(change)))
        _move(change.dir, target)
        specs = ", ".join(merged) if merged else "no spec changes"
        return ArchiveOutcome(
            "archived", merged, target, f"{change.id} archived to {change.rel(target)} ({specs})"
        )


def _merge_specs(change: Change, state: ChangeState, resolved: bool) -> tuple[str, ...]:
    """Merge every spec in memory first; write only when none conflicts."""
    plans: list[tuple[Path, str]] = []
    conflicts: list[str] = []
    for name in change.spec_files():
        living_path = change.living_specs_dir / name
        # Read as bytes: a CRLF living spec stays CRLF, and an unchanged one byte-identical.
        living = living_path.read_bytes().decode("utf-8") if living_path.is_file() else None
        ours = (change.specs_dir / name).read_bytes().decode("utf-8")
        rel = change.rel(living_path)
        try:
            result = merge_spec(
                base_text(change, state, name),
                living,
                ours,
                prefer_change=resolved,
                name=_spec_title(name),
            )
        except SpecDeltaError as exc:
            raise SpecDeltaError(
                f"cannot archive {change.id}: {change.rel(change.specs_dir / name)}: {exc}; "
                f"nothing was written. Fix it, then run phasegate archive {change.id}"
            ) from None
        conflicts += [f"{rel} {title!r}" for title in result.conflicts]
        if result.text != (living if living is not None else ""):
            plans.append((living_path, result.text))
    if conflicts:
        raise ArchiveConflict(
            f"cannot archive {change.id}: both it and the living specs changed "
            f"{'; '.join(conflicts)} since the change began; nothing was written. Merge each "
            f"into {change.rel(change.specs_dir)}/ by hand, then run "
            f"phasegate archive {change.id} --resolved"
        )
    for path, text in plans:
        atomic_write_text(path, change.item.redactor.text(text))
        change.record("spec.merged", spec=change.rel(path))
    return tuple(change.rel(path) for path, _ in plans)


def _spec_title(name: str) -> str:
    """The title of a spec a delta creates (``auth.md``, ``auth/spec.md`` -> ``auth``)."""
    path = PurePosixPath(name)
    return path.parent.name if path.stem == "spec" and path.parent.name else path.stem


def _target(change: Change) -> Path:
    """A free archive folder: ``<archive>/<YYYY-MM-DD>-<id>`` (``-2``, ``-3``... if taken)."""
    stem = f"{datetime.now(UTC).strftime('%Y-%m-%d')}-{change.id}"
    target = change.archive_root / stem
    number = 2
    while target.exists():
        target = change.archive_root / f"{stem}-{number}"
        number += 1
    return target


def _move(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        raise StateCorruptError(
            f"cannot move {source} to {target}: the target already exists; both were left untouched"
        )
    os.rename(source, target)
    fsync_dir(source.parent)
    fsync_dir(target.parent)
