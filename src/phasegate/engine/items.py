"""Create work items, find them, list them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from phasegate.config import CONFIG_DIR, CONFIG_FILE, Config
from phasegate.engine.confine import check_folder_possible, check_inside, inside, lexically_inside
from phasegate.engine.item import WorkItem, head_commit, items_dir, validate_item_name
from phasegate.engine.plugin_api import view_files
from phasegate.engine.state import EngineState
from phasegate.errors import (
    BadInputError,
    ConfigError,
    NotFoundError,
    PhasegateError,
    WorkflowError,
)
from phasegate.repo_paths import item_state_files
from phasegate.state.journal import utc_now
from phasegate.suggested_commands import COMMAND_LINE
from phasegate.workflow.loaded import LoadedWorkflow
from phasegate.workflow.model import Workflow
from phasegate.workflow.registry import WorkflowRegistry


def refuse_own_commands(
    workflow: Workflow, name: str, *, creating: bool, next_command: str | None = None
) -> None:
    """Items of a workflow with commands are run through those commands, and created by
    the command that names a ``start`` node when there is one (the ``change`` workflow's
    ``plan``); otherwise ``phasegate new`` creates them. ``next_command``: the one
    ``phasegate status`` names for the item, named after the commands."""
    if not workflow.commands:
        return
    creators = [c for c, command in workflow.commands.items() if command.start is not None]
    if creating and not creators:
        return
    own = COMMAND_LINE.get(workflow.name, frozenset())
    if all(c in own for c in workflow.commands):  # each is a command of the command line
        commands = ", ".join(f"phasegate {c}" for c in workflow.commands)
        if creating:
            raise BadInputError(
                f"{name!r} belongs to workflow {workflow.name!r}, whose items are created and "
                f"run with its own commands ({commands}); create it with: "
                f'phasegate {creators[0]} {name} "DESCRIPTION"'
            )
        then = f". Next: {next_command}" if next_command else ""
        raise BadInputError(
            f"{name!r} belongs to workflow {workflow.name!r}, whose items are run with its own "
            f"commands: {commands}{then}"
        )
    if creating:
        raise BadInputError(
            f"{name!r}: workflow {workflow.name!r} creates its items with its command "
            f"{creators[0]!r} (its start node), not with phasegate new"
        )
    names = " or ".join(workflow.commands)
    raise BadInputError(
        f"{name!r} belongs to workflow {workflow.name!r}, whose items run only through its "
        f"commands: phasegate run {name} --command NAME (NAME: {names})"
    )


def check_configured_items_dir(repo: Path, workflow: Workflow, config: Config) -> None:
    """An ``items_dir`` set in the config must stay inside the repository (the workflow
    file's own is checked when it loads): ConfigError naming the key otherwise."""
    settings = config.workflows.get(workflow.name)
    value = settings.items_dir if settings else None
    if not value:
        return
    folder = repo / value
    if inside(folder, [repo]):
        return
    how = ", through a symlink" if lexically_inside(folder, repo) else ""
    raise ConfigError(
        f"{CONFIG_DIR}/{CONFIG_FILE}: workflows.{workflow.name}.items_dir {value!r} leads "
        f"outside the repository (to {folder.resolve()}{how}); refused: give a folder "
        "inside the repository"
    )


def create_item(
    repo: Path,
    name: str,
    loaded: LoadedWorkflow,
    config: Config,
    *,
    mode: str | None,
    description: str,
    worktree: bool = False,
    data: Mapping[str, Any] | None = None,
    through_command: bool = False,
) -> WorkItem:
    """Create the folder and first state of a new work item.

    With ``worktree`` the item also gets its own git worktree and branch, where
    its agents will work. ``data`` seeds the plug-ins' values (a plan's path).
    """
    validate_item_name(name)
    workflow = loaded.workflow
    if not through_command:
        refuse_own_commands(workflow, name, creating=True)
    mode = mode or workflow.default_mode
    if mode not in workflow.modes:
        raise BadInputError(
            f"unknown mode {mode!r} for workflow {workflow.name!r} "
            f"(modes: {', '.join(workflow.modes)})"
        )
    check_configured_items_dir(repo, workflow, config)
    item = WorkItem(repo, name, loaded, config)
    check_inside(item.item_dir, repo, f"the folder of work item {name!r}")
    # Before anything is written: a file where a folder goes leaves nothing half-made.
    purpose = f"create work item {name!r}"
    check_folder_possible(item.item_dir, repo, purpose)
    check_folder_possible(item.lock_path.parent, repo, purpose)
    with item.locked():
        if item.engine_path.exists() or item.view.adoptable():
            raise BadInputError(
                f"work item {name!r} already exists at {item.item_dir}; "
                f"continue it with 'phasegate run {name}'"
            )
        state = EngineState.new(
            item=name,
            workflow=workflow.name,
            mode=mode,
            description=description,
            created=utc_now(),
            base_commit=head_commit(repo),
        )
        state.data.update(data or {})
        if worktree:
            from phasegate.engine.worktree import add_worktree

            state["worktree"], state["branch"] = add_worktree(repo, name)
        item.record("item.created", workflow=workflow.name, mode=mode, description=description)
        item.save(state, durable=True)
    return item


def iter_items(
    repo: Path, registry: WorkflowRegistry, config: Config
) -> Iterator[tuple[str, str, Path]]:
    """Yield ``(workflow, item name, engine state file)`` for every work item in the repo."""
    seen: set[Path] = set()
    for workflow_name in registry.names():
        try:
            workflow = registry.get(workflow_name).workflow
        except WorkflowError:
            continue
        root = repo / items_dir(workflow, config)
        # A state file written by hand (seed 002's STATE.yaml) is an item before any run.
        names = view_files(workflow) if workflow.commands else []
        for name, state_file in item_state_files(root, names[0] if names else None):
            if state_file in seen:
                continue
            seen.add(state_file)
            yield workflow_name, name, state_file


def locate_item(
    repo: Path,
    name: str,
    registry: WorkflowRegistry,
    config: Config,
    workflow: str | None = None,
    *,
    command: str | None = None,
) -> WorkItem:
    """Find work item ``name`` (in ``workflow`` if given) and return its handle."""
    validate_item_name(name)
    names = [workflow] if workflow else registry.names()
    matches: list[WorkItem] = []
    broken: list[WorkflowError] = []
    for workflow_name in names:
        try:
            loaded = registry.get(workflow_name)
        except WorkflowError as exc:
            broken.append(exc)
            continue
        item = WorkItem(repo, name, loaded, config)
        if item.exists():
            matches.append(item)
    if len(matches) > 1:
        names_found = [m.workflow.name for m in matches]
        # The dashboard takes the workflow in the address; the commands take --workflow.
        how = (
            f"add ?workflow={'|'.join(names_found)} to the address"
            if command == "dashboard"
            else "pick one with --workflow"
        )
        raise BadInputError(
            f"work item {name!r} exists in several workflows ({', '.join(names_found)}); {how}"
        )
    if matches:
        if command is None and not _ended_outside_command_line(matches[0]):
            refuse_own_commands(
                matches[0].workflow, name, creating=False, next_command=_next_of(matches[0])
            )
        return matches[0]
    if "change" in names:  # an archived change is in the change archive, not its items folder
        from phasegate.change.api import archived_change

        archived = archived_change(repo, name, registry, config, command)
        if archived is not None:
            return archived
    if broken:
        raise broken[0]
    if workflow is None:
        from phasegate.engine.index import items_of_missing_workflows

        for gone, items in items_of_missing_workflows(repo, registry.names()).items():
            if name in items:
                raise NotFoundError(
                    f"no work item named {name!r} in a workflow of {repo}: the item index "
                    f"last saw it in workflow {gone!r}, which is not found (neither built in "
                    f"nor in .phasegate/workflows/); restore that workflow to use it"
                )
    if workflow is not None:
        others = [
            other
            for other in registry.names()
            if other != workflow and _exists_in(repo, name, registry, config, other)
        ]
        if others:
            raise NotFoundError(
                f"no work item named {name!r} in workflow {workflow!r} of {repo}; it is an "
                f"item of workflow {others[0]!r}: use --workflow {others[0]} or leave it out"
            )
        raise NotFoundError(
            f"no work item named {name!r} in workflow {workflow!r} of {repo}"
            + _how_to_create(registry.get(workflow).workflow, name)
        )
    raise NotFoundError(
        f"no work item named {name!r} in {repo}; create it with 'phasegate new {name}'"
        + _or_own_creators(registry, name)
    )


def _or_own_creators(registry: WorkflowRegistry, name: str) -> str:
    """``, or for a change: phasegate plan NAME "DESCRIPTION"``: the workflows whose items
    ``phasegate new`` refuses, created by a command of the command line instead."""
    found: list[str] = []
    for other in registry.names():
        try:
            workflow = registry.get(other).workflow
        except PhasegateError:
            continue  # a broken workflow file is reported where it is used
        creators = [c for c, command in workflow.commands.items() if command.start is not None]
        if creators and creators[0] in COMMAND_LINE.get(workflow.name, frozenset()):
            found.append(f'for a {workflow.name}: phasegate {creators[0]} {name} "DESCRIPTION"')
    return "".join(f", or {words}" for words in found)


def _next_of(item: WorkItem) -> str | None:
    """What ``phasegate status`` names next for a change (``None`` for another workflow's
    item, or a STATE.yaml that cannot be read)."""
    if item.workflow.name != "change":
        return None
    from phasegate.change.api import next_for_change

    return next_for_change(item)


def _ended_outside_command_line(item: WorkItem) -> bool:
    """Whether ``item``, of a workflow with commands (run through ``phasegate run
    --command``, or the command line's own, such as ``phasegate plan``), has ended
    (completed, archived, or at another end): nothing is left to run, and ``run`` says so
    instead of advising a command. Only the state file's top-level ``status`` and ``at``
    are read; a file that cannot be read counts as not ended."""
    if not item.workflow.commands:
        return False
    try:
        data = json.loads(item.engine_path.read_bytes())
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    return data.get("status") in ("completed", "stopped") or data.get("at") == "@end"


def _how_to_create(workflow: Workflow, name: str) -> str:
    """``; create it with ...`` for an item of ``workflow`` (nothing when only its own
    commands, run through ``phasegate run``, create its items)."""
    creators = [c for c, command in workflow.commands.items() if command.start is not None]
    if not workflow.commands:
        return f"; create it with 'phasegate new {name} --workflow {workflow.name}'"
    if creators and creators[0] in COMMAND_LINE.get(workflow.name, frozenset()):
        return f'; create it with: phasegate {creators[0]} {name} "DESCRIPTION"'
    return ""


def _exists_in(
    repo: Path, name: str, registry: WorkflowRegistry, config: Config, workflow: str
) -> bool:
    try:
        return WorkItem(repo, name, registry.get(workflow), config).exists()
    except PhasegateError:
        return False
