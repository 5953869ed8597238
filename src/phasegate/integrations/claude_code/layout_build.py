"""Build the hooks' workflow layout with the full workflow loader (the slow path).

Only :func:`phasegate.integrations.claude_code.layout.load_layout` calls this,
when the cached layout is missing or out of date, and ``phasegate install
claude-code`` so that the first session after installing is already fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate import plugins
from phasegate.config import Config, load_config
from phasegate.engine.item import items_dir
from phasegate.engine.plugin_api import view_files
from phasegate.engine.state import ENGINE_FILE
from phasegate.engine.state_archive import ARCHIVE_FILE
from phasegate.errors import PhasegateError
from phasegate.integrations.claude_code.layout import LAYOUT_FORMAT
from phasegate.workflow.model import EndNode, Workflow
from phasegate.workflow.registry import WorkflowRegistry
from phasegate.workflow.transitions import producers

if TYPE_CHECKING:
    from phasegate.integrations.claude_code.layout import Layout


def describe_workflow(workflow: Workflow, folder: str) -> dict[str, Any]:
    """What the hooks need to know of ``workflow`` to find and summarise its items."""
    views = view_files(workflow)
    return {
        "items_dir": folder,
        # phasegate's own files in each item folder: agents may not edit them.
        "files": [ENGINE_FILE, ARCHIVE_FILE, workflow.journal_file, *views],
        # The file a person reads as the item's state (checked when the item is shown).
        "state_file": views[0] if views else ENGINE_FILE,
        "state_format": "yaml" if views and views[0].endswith((".yaml", ".yml")) else "json",
        "views": views,
        # Whether the view's state file is written from the engine state (never stops).
        "state_file_rebuilt": _rebuilt(workflow),
        "commands": list(workflow.commands),
        "producers": {
            file: producers(workflow, file)
            for node in workflow.nodes
            for file in node.prerequisites.hard
        },
        # The hard prerequisites of every node, nested ones by path (``phasegate status``).
        "prerequisites": {path: list(node.prerequisites.hard) for path, node in workflow.walk()},
        "nodes": {
            node.id: {"hard": list(node.prerequisites.hard), "label": node.label or node.id}
            for node in workflow.nodes
            if not isinstance(node, EndNode)
        },
        "modes": {
            name: {"max_iterations": mode.max_iterations, "skip": list(mode.skip)}
            for name, mode in workflow.modes.items()
        },
    }


def _rebuilt(workflow: Workflow) -> bool:
    try:
        cls = plugins.load("views", workflow.view.plugin)
    except plugins.PluginError:
        return False
    return bool(getattr(cls, "state_file_rebuilt", False))


def build_layout(repo: Path) -> Layout:
    """The layout of every workflow of ``repo``; broken ones are named in ``problems``."""
    problems: list[str] = []
    try:
        config = load_config(repo)
    except PhasegateError as exc:
        problems.append(str(exc))
        config = Config()
    registry = WorkflowRegistry(repo)
    workflows: dict[str, Any] = {}
    for name in registry.names():
        try:
            workflow = registry.get(name).workflow
        except PhasegateError as exc:
            problems.append(str(exc))
            continue
        workflows[name] = describe_workflow(workflow, items_dir(workflow, config))
    return {"format": LAYOUT_FORMAT, "workflows": workflows, "problems": problems}
