"""The commands phasegate suggests for a work item, made to work when its name is not unique.

An item is found by its name alone unless another workflow has an item of the
same name; then a command naming it must also name its workflow, or it stops
with "pick one with --workflow". The engine writes an item's next command
knowing that item only (and the item index keeps it), so the commands are
given their ``--workflow`` here, where the command line (or the hook, or the
dashboard) knows the other items.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from phasegate.errors import PhasegateError, WorkflowError

TYPE_CHECKING = False  # typing is not imported at run time: the hooks import this module
if TYPE_CHECKING:
    from typing import Any

    from phasegate.config import Config
    from phasegate.workflow.registry import WorkflowRegistry

#: The commands that find an item by its name and take ``--workflow`` to pick one.
PICK_WORKFLOW = ("run", "status", "decisions", "answer", "logs")

#: The workflows whose commands are commands of the command line (``phasegate plan ID``);
#: any other workflow's commands are run with ``phasegate run ITEM --command NAME``.
COMMAND_LINE = {"change": frozenset({"plan", "impl", "archive"})}


def workflow_command(workflow: str, command: str, item: str) -> str:
    """The command line that runs ``item`` through ``workflow``'s command ``command``."""
    if command in COMMAND_LINE.get(workflow, frozenset()):
        return f"phasegate {command} {item}"
    return f"phasegate run {item} --command {command}"


def with_workflow(text: str, item: str, workflow: str) -> str:
    """``text`` with ``--workflow WORKFLOW`` after ``ITEM`` in each ``phasegate COMMAND ITEM``
    it holds whose command takes it (one given already is left alone)."""
    commands = "|".join(PICK_WORKFLOW)
    pattern = re.compile(
        rf"(?<![\w.-])(phasegate (?:{commands}) {re.escape(item)})"
        # The whole name (not the start of a longer one), not yet followed by its workflow.
        rf"(?![\w.-])(?! (?:--workflow|-w)\b)"
    )
    return pattern.sub(lambda found: f"{found.group(1)} --workflow {workflow}", text)


def status_with_workflow(status: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an item's status (or status table row) whose suggested commands name its
    workflow: the next command and each pending decision's answer command."""
    item, workflow = str(status["id"]), str(status["workflow"])
    named = dict(status)
    if named.get("nextCommand"):
        named["nextCommand"] = with_workflow(named["nextCommand"], item, workflow)
    if named.get("pendingDecisions"):
        named["pendingDecisions"] = [
            {**d, "command": with_workflow(d["command"], item, workflow)} if d.get("command") else d
            for d in named["pendingDecisions"]
        ]
    return named


def shared_names(items: Iterable[tuple[str, str]]) -> set[str]:
    """The names, among ``(workflow, item name)`` pairs, that more than one workflow has."""
    workflows: dict[str, set[str]] = {}
    for workflow, name in items:
        workflows.setdefault(name, set()).add(workflow)
    return {name for name, found in workflows.items() if len(found) > 1}


def named_elsewhere(
    root: Path, name: str, workflow: str, registry: WorkflowRegistry, config: Config
) -> bool:
    """Whether a workflow other than ``workflow`` has a work item named ``name``."""
    from phasegate.engine.item import WorkItem

    for other in registry.names():
        if other == workflow:
            continue
        try:
            loaded = registry.get(other)
        except WorkflowError:
            continue  # a workflow that does not load finds no item by name either
        if WorkItem(root, name, loaded, config).exists():
            return True
    return False


@contextmanager
def errors_with_workflow(item: str, workflow: str, enabled: bool) -> Iterator[None]:
    """With ``enabled``, an error raised inside names ``workflow`` in the commands it
    suggests for ``item`` (a run's "confirm with ...", "answer with ...")."""
    try:
        yield
    except PhasegateError as exc:
        if enabled:
            exc.message = with_workflow(exc.message, item, workflow)
        raise
