"""Build the hooks' workflow layout with the full workflow loader (the slow path).

Only :func:`phasegate.integrations.claude_code.layout.load_layout` calls this,
when the cached layout is missing or out of date, and ``phasegate install
claude-code`` so that the first session after installing is already fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate.config import Config, load_config
from phasegate.engine.workitem import items_dir
from phasegate.errors import PhasegateError
from phasegate.integrations.claude_code.layout import LAYOUT_FORMAT, Layout
from phasegate.workflow.model import Workflow
from phasegate.workflow.registry import WorkflowRegistry


def describe_workflow(workflow: Workflow, folder: str) -> dict[str, Any]:
    """What the hooks need to know of ``workflow`` to find and summarise its items."""
    return {
        "items_dir": folder,
        "state_file": workflow.state_file,
        "state_format": workflow.state_format,
        "journal_file": workflow.journal_file,
        "history_file": workflow.history_file,
        # Workflows run by their own commands keep their own state fields.
        "commands": list(getattr(workflow, "commands", ())),
        "own_next": _own_next_commands(workflow),
        "phases": {
            phase.name: {
                "artifact": phase.artifact,
                "next": list(workflow.successors(phase)),
                "hard": list(phase.prerequisites.hard),
            }
            for phase in workflow.phases
        },
        "modes": {
            name: {"max_iterations": mode.max_iterations, "skip": list(mode.skip)}
            for name, mode in workflow.modes.items()
        },
    }


def _own_next_commands(workflow: Workflow) -> dict[str, str]:
    """Next command per ``phase`` value (``{id}`` for the item) of a workflow with own commands.

    Their state machines live in code; the hooks cannot import it (too slow),
    so what it answers is computed here, once per layout.
    """
    if workflow.name != "change" or not getattr(workflow, "commands", ()):
        return {}
    try:
        from phasegate.change.phases import ChangePhase, next_command
    except ImportError:
        return {}
    return {phase.value: next_command(phase, "{id}") for phase in ChangePhase}


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
