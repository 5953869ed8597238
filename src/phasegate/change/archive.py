"""The ``change`` workflow's ``archive`` action: the change's specs merged into the living
specs, requirement by requirement, or refused with nothing written."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from phasegate.change.paths import ChangePaths, paths_of
from phasegate.change.phases import ChangeNotReady
from phasegate.change.specdelta import SpecDeltaError, delta_place
from phasegate.change.specfiles import base_text, spec_order
from phasegate.change.specmerge import merge_spec
from phasegate.engine.plugin_api import Action, PluginContext
from phasegate.faults import crash_point
from phasegate.state.atomic import atomic_write_text, remove_leftover_temp_files


def _spec_title(name: str) -> str:
    """The title of a spec a delta creates (``auth.md``, ``auth/spec.md`` -> ``auth``)."""
    path = PurePosixPath(name)
    return path.parent.name if path.stem == "spec" and path.parent.name else path.stem


class ArchiveConflict(ChangeNotReady):
    """The change and the living specs both changed the same requirement."""


def _refuse_missing_specs(change_id: str, change: ChangePaths, bases: dict[str, bool]) -> None:
    """A spec the change wrote that is gone from its specs/ folder is not archived as "no
    spec changes": the archive is refused, nothing written. The specs it wrote are those
    proposal.md lists (else those it recorded a base for)."""
    try:
        listed, _ = spec_order(change.proposal_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        listed = None
    expected = listed if listed is not None else sorted(bases)
    missing = [name for name in expected if not (change.specs_dir / name).is_file()]
    if not missing:
        return
    files = ", ".join(change.rel(change.specs_dir / name) for name in missing)
    noun, verb = ("spec file", "is") if len(missing) == 1 else ("spec files", "are")
    raise ChangeNotReady(
        f"cannot archive {change_id}: the {noun} {files} it wrote {verb} missing; "
        f"nothing was written. Restore it, or remove it from the specs list of "
        f"{change.rel(change.proposal_path)} if the change no longer changes that spec, "
        f"then run phasegate archive {change_id}"
    )


def _refuse_missing_bases(
    change_id: str, change: ChangePaths, bases: dict[str, bool], base_commit: str | None
) -> None:
    """The copy of a living spec as the change found it is what the merge compares with:
    without it every requirement would look changed on both sides (false conflicts)."""
    for name in change.spec_files():
        base = change.base_dir / name
        if not bases.get(name) or base.is_file():
            continue
        living = change.rel(change.living_specs_dir / name)
        folder = change.rel(base.parent)
        hint = (
            f" (as committed when the change began: mkdir -p {folder} && git show "
            f"{base_commit[:12]}:{living} > {change.rel(base)})"
            if base_commit
            else ""
        )
        raise ChangeNotReady(
            f"cannot archive {change_id}: the merge base {change.rel(base)} (the living "
            f"{living} as the change found it) is missing; nothing was written. Restore it"
            f"{hint}, then run phasegate archive {change_id}"
        )


class Archive(Action):
    """``archive``: merge the change's specs into the living specs, requirement by requirement.

    Every merge is computed before anything is written; a true conflict
    refuses the whole archive with nothing written and is recorded (STATE.yaml
    ``archive_conflicts``); ``archive-conflict`` answered ``resolved`` (the
    ``--resolved`` flag, after merging by hand) takes the change's side of the
    conflicts recorded, and reports any other first. The
    merged specs are recorded; the folder moves into the archive when the
    change completes (see the change view).
    """

    name = "change-archive"

    def run(self, ctx: PluginContext) -> str:
        from datetime import UTC, datetime

        change = paths_of(ctx)
        bases = ctx.state.data.setdefault("spec_bases", {})
        resolved = ctx.answers.get("archive-conflict") == "resolved"
        # ``--resolved`` resolves the conflicts an earlier archive reported (and recorded),
        # no others: a conflict nobody was shown is reported first, never overwritten.
        reported = set(ctx.state.data.get("archive_conflicts") or [])
        _refuse_missing_specs(ctx.item.name, change, bases)
        _refuse_missing_bases(ctx.item.name, change, bases, ctx.state.base_commit)
        plans: list[tuple[Path, str]] = []
        conflicts: list[str] = []
        shown: list[str] = []  # every conflict found, resolved or not: what a refusal records
        for name in change.spec_files():
            living_path = change.living_specs_dir / name
            # Read as bytes: a CRLF living spec stays CRLF, an unchanged one byte-identical.
            living = living_path.read_bytes().decode("utf-8") if living_path.is_file() else None
            ours = (change.specs_dir / name).read_bytes().decode("utf-8")
            rel = change.rel(living_path)
            try:
                result = merge_spec(
                    base_text(change, bases, name), living, ours, name=_spec_title(name)
                )
                found = [f"{rel} {title!r}" for title in result.conflicts]
                shown += found
                if found and resolved and reported.issuperset(found):
                    result = merge_spec(
                        base_text(change, bases, name),
                        living,
                        ours,
                        prefer_change=True,
                        name=_spec_title(name),
                    )
            except SpecDeltaError as exc:
                spec = change.rel(change.specs_dir / name)
                place = exc.place or (
                    delta_place(ours, exc.section, exc.requirement)
                    if exc.section and exc.requirement
                    else None
                )
                where = f"{spec}:{place[0]}:{place[1]}:" if place else f"in {spec},"
                raise SpecDeltaError(
                    f"cannot archive {ctx.item.name}: {where} {exc}; nothing was written. "
                    f"Fix it, then run phasegate archive {ctx.item.name}"
                ) from None
            conflicts += [f"{rel} {title!r}" for title in result.conflicts]
            if result.text != (living if living is not None else ""):
                plans.append((living_path, result.text))
        if conflicts:
            # Kept (STATE.yaml ``archive_conflicts``, the journal) so that status names
            # ``--resolved`` instead of a plain archive that would find them again.
            ctx.state.data["archive_conflicts"] = shown
            ctx.record("archive.conflict", conflicts=conflicts)
            ctx.item.save(ctx.state, durable=True)
            raise ArchiveConflict(
                f"cannot archive {ctx.item.name}: both it and the living specs changed "
                f"{'; '.join(conflicts)} since the change began; nothing was written. Merge each "
                f"into {change.rel(change.specs_dir)}/ by hand, then run "
                f"phasegate archive {ctx.item.name} --resolved"
            )
        merged = list(ctx.state.data.get("merged") or [])
        # What this archive merges is recorded (durably) before a living spec is written:
        # a run killed part-way finds its earlier writes already merged, with no plan left
        # for them, and still records them as merged.
        merging = list(ctx.state.data.get("merging") or [])
        merging += [change.rel(p) for p, _ in plans if change.rel(p) not in merging]
        if plans:
            ctx.state.data["merging"] = merging
            ctx.item.save(ctx.state, durable=True)
        for path, text in plans:
            remove_leftover_temp_files(path.parent, path.name)
            atomic_write_text(path, ctx.item.redactor.text(text))
            ctx.record("spec.merged", spec=change.rel(path))
            crash_point("archive.after_merge")
        for rel in merging:
            if rel not in merged:
                merged.append(rel)
        ctx.state.data["merged"] = merged
        ctx.state.data.pop("merging", None)
        ctx.state.data.pop("archive_conflicts", None)
        if not ctx.state.data.get("archived_to"):
            stem = f"{datetime.now(UTC).strftime('%Y-%m-%d')}-{ctx.item.name}"
            target = change.archive_root / stem
            number = 2
            while target.exists():
                target = change.archive_root / f"{stem}-{number}"
                number += 1
            ctx.state.data["archived_to"] = change.rel(target)
        ctx.record("change.archived", to=ctx.state.data["archived_to"], specs=merged)
        return "done"
