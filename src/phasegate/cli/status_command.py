"""``phasegate status``: where each work item stands, as a table or JSON."""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from phasegate.cli.app import (
    AllItemsArgument,
    JsonOption,
    RepoOption,
    WorkflowOption,
    _repo,
    app,
    out,
)
from phasegate.cli.output import warn, write_json
from phasegate.repo_paths import CONFIG_DIR


@app.command()
def status(
    name: AllItemsArgument = None,
    as_json: JsonOption = False,
    workflow: WorkflowOption = None,
    repo: RepoOption = None,
) -> None:
    """Show phase, next command, iterations, pending decisions and reviewer concerns.

    An item a run is going on for is shown running (its pid), with the command that
    watches it (phasegate logs NAME -f) as the next one.
    """
    from phasegate.cli.item_rows import quick_item_rows

    root = _repo(repo)
    if name is None and not as_json and (root / CONFIG_DIR).is_dir():
        # The table from the item index and the cached workflow layout, when they can tell.
        with _no_collection():
            rows = quick_item_rows(root)
        if rows is not None:
            from phasegate.integrations.claude_code.layout import load_layout

            missing = _warn_missing_workflows(root, list(load_layout(root).get("workflows", {})))
            _print_rows(rows, missing=missing, root=root)
            return
    from phasegate.cli.item_rows import full_status, item_rows, layout_items
    from phasegate.config import load_config
    from phasegate.engine.item_status import status_of
    from phasegate.engine.items import iter_items, locate_item
    from phasegate.suggested_commands import (
        named_elsewhere,
        shared_names,
        status_with_workflow,
    )
    from phasegate.workflow.registry import WorkflowRegistry

    config = load_config(root)
    registry = WorkflowRegistry(root)
    if name is not None:
        item = locate_item(root, name, registry, config, workflow, command="status")
        data = status_of(item, item.load(read_journal=False))
        # Without --workflow the item was found by its name alone: no other workflow has it.
        if workflow is not None and named_elsewhere(
            root, name, item.workflow.name, registry, config
        ):
            data = status_with_workflow(data)
        if as_json:
            write_json(data)
        else:
            from phasegate.cli.views import print_item_status  # rich's tables: text only

            print_item_status(out, data)
        return
    if as_json:
        items = None
        if (root / CONFIG_DIR).is_dir():
            from phasegate.integrations.claude_code.layout import load_layout

            layout = load_layout(root)  # lists the items without loading every workflow
            if not layout.get("problems"):
                items = iter(layout_items(root, layout.get("workflows", {})))
        if items is None:
            _unlisted(registry)
            items = iter_items(root, registry, config)
        from phasegate.engine.fanout_git import git_listings_once

        with _no_collection(), git_listings_once():  # git asked once, not per ended item
            found = [(workflow_name, item_name) for workflow_name, item_name, _ in items]
            shared = shared_names(found)
            entries = [
                full_status(root, item_name, workflow_name, registry, config)
                for workflow_name, item_name in found
            ]
            write_json(
                [
                    status_with_workflow(entry) if entry["id"] in shared else entry
                    for entry in entries
                ]
            )
        return
    unlisted = _unlisted(registry)
    rows = item_rows(root, registry, config)
    missing = _warn_missing_workflows(root, registry.names())
    _print_rows(rows, unlisted, missing=missing, root=root)


def _warn_missing_workflows(root: Path, known: Sequence[str]) -> bool:
    """Warn of the items the index last saw in workflows that are not found (a workflow
    file deleted or renamed): they are on disk, but no workflow lists them. Whether any
    was warned of."""
    from phasegate.engine.index import items_of_missing_workflows

    missing = items_of_missing_workflows(root, known)
    for gone, items in missing.items():
        shown = ", ".join(items[:10]) + (f" and {len(items) - 10} more" if len(items) > 10 else "")
        warn(
            f"the item index last saw {len(items)} item{'s' if len(items) != 1 else ''} in "
            f"workflow {gone!r}, which is not found (neither built in nor in "
            f".phasegate/workflows/): {shown}; restore that workflow to list them"
        )
    return bool(missing)


def _unlisted(registry: Any) -> list[str]:
    return unlisted_workflows(registry, "items")


def unlisted_workflows(registry: Any, what: str) -> list[str]:
    """The workflows that do not load, each warned of on stderr: ``what`` of their items
    (``items``, ``decisions of the items``) cannot be listed (they are not gone; fixing
    the workflow lists them again)."""
    from phasegate.errors import WorkflowError

    broken: list[str] = []
    for workflow_name in registry.names():
        try:
            registry.get(workflow_name)
        except WorkflowError as exc:
            warn(f"{exc} (the {what} of workflow {workflow_name!r} are not listed)")
            broken.append(workflow_name)
    return broken


@contextmanager
def _no_collection() -> Iterator[None]:
    """No garbage collection while a thousand items are read and written: the objects
    made meanwhile are nearly all kept to the end, and looking through them again and
    again took a fifth of the time. Collection resumes afterwards."""
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _print_rows(
    rows: list[dict[str, Any]],
    unlisted: Sequence[str] = (),
    *,
    missing: bool = False,
    root: Path | None = None,
) -> None:
    from phasegate.cli.views import print_item_table

    with _no_collection():
        if rows:
            print_item_table(out, rows)
        elif missing and not unlisted:
            out.print("No work items listed: their workflows are not found (see above)")
        elif unlisted:
            names = ", ".join(repr(name) for name in unlisted)
            one = len(unlisted) == 1
            which, does = ("workflow", "does") if one else ("workflows", "do")
            again = "its items are listed once it loads" if one else "their items once they load"
            out.print(
                f"No work items listed: {which} {names} {does} not load (see above); "
                f"{again} (phasegate validate FILE says why)"
            )
        elif root is not None and (archived := _archived_changes(root)):
            count, where = archived
            out.print(
                f"No work items in progress ({count} archived change"
                f"{'' if count == 1 else 's'} in {where}: phasegate change list). "
                "Create one with: phasegate new NAME --description '...'"
            )
        else:
            out.print("No work items yet. Create one with: phasegate new NAME --description '...'")


def _archived_changes(root: Path) -> tuple[int, str] | None:
    """How many changes the ``change`` workflow archived, and where (the repository has no
    work item left in progress): ``None`` when there is none."""
    from phasegate.change.api import Changes
    from phasegate.change.paths import ARCHIVE_DIR, STATE_FILE
    from phasegate.config import load_config

    archive = Changes(root, load_config(root)).changes_root / ARCHIVE_DIR
    if not archive.is_dir():
        return None
    count = sum(1 for _ in archive.glob(f"*/{STATE_FILE}"))
    where = archive.relative_to(root) if archive.is_relative_to(root) else archive
    return (count, str(where)) if count else None
