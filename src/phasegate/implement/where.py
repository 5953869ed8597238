"""Where an implement work item's things are: its plan, spec folder, agents, settings, nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phasegate.engine.node_state import NodeState
from phasegate.engine.plugin_api import PluginContext
from phasegate.engine.state import EngineState
from phasegate.errors import BadInputError
from phasegate.implement.agents import AgentRoster, find_agents
from phasegate.implement.plan import Plan, read_plan
from phasegate.implement.settings import ImplementSettings, implement_settings

#: The node paths of the workflow (``implement.yaml``): phases, their tasks, a task's nodes.
PHASES = "phases"
TASKS = "tasks"
AGENT_NODE = "implement"
CONTEXT_NODE = "context"
#: In the item's data: the open tasks a completed item was reopened for (see the view).
REOPENED = "reopened_for"


def plan_rel(state: EngineState) -> str:
    """The plan's path relative to the repository, as the item records it."""
    plan = state.data.get("plan")
    if not isinstance(plan, str) or not plan:
        raise BadInputError(
            f"work item {state.item!r} names no PLAN.md; create it with "
            f"phasegate implement SPEC-ID|PATH or phasegate new {state.item} "
            "--workflow implement --plan PATH"
        )
    return plan


def plan_path(ctx: PluginContext) -> Path:
    """The plan in the item's work tree.

    Never a parallel task's worktree: PLAN.md is read and ticked where the person
    sees it, by the engine alone, so tasks running at once never conflict over it.
    """
    return ctx.item.workdir(ctx.state) / plan_rel(ctx.state)


def spec_dir_rel(state: EngineState) -> str:
    """The folder holding the plan and its BRD/PRD/SDD, relative to the repository."""
    parent = Path(plan_rel(state)).parent.as_posix()
    return "." if parent in ("", ".") else parent


def load_plan(ctx: PluginContext) -> Plan:
    """The plan as it is now (a missing plan or an error in it stops, exit 2)."""
    return read_plan(plan_path(ctx), plan_rel(ctx.state))


def settings_of(ctx: PluginContext) -> ImplementSettings:
    return implement_settings(ctx.item.config, ctx.repo)


_ROLES: dict[tuple[Any, ...], frozenset[str]] = {}


def workflow_roles(repo: Path) -> frozenset[str]:
    """Roles of every workflow known here (config roles by these names are not agents).

    Loading every workflow costs a YAML parse each, so the answer is kept until one
    of the workflow files changes.
    """
    from phasegate.errors import WorkflowError
    from phasegate.workflow.registry import WorkflowRegistry

    registry = WorkflowRegistry(repo)
    files = registry.files()
    stamp: tuple[Any, ...] = (str(repo),)
    for name, (path, _) in sorted(files.items()):
        try:
            stamp += ((name, str(path), path.stat().st_mtime_ns),)
        except OSError:
            stamp += ((name, str(path), None),)
    found = _ROLES.get(stamp)
    if found is None:
        roles: set[str] = set()
        for name in registry.names():
            try:
                roles.update(registry.get(name).workflow.roles)
            except WorkflowError:
                continue
        found = _ROLES[stamp] = frozenset(roles)
    return found


def roster(ctx: PluginContext) -> AgentRoster:
    """The repository's agents, read now (a file added a moment ago counts)."""
    return find_agents(ctx.repo, ctx.item.config, workflow_roles(ctx.repo))


def task_prefix(path: str) -> str:
    """``phases[p]/tasks[t]/approved`` -> ``phases[p]/tasks[t]``."""
    return path.rsplit("/", 1)[0]


def agent_node(ctx: PluginContext) -> NodeState | None:
    """The state of the current task's agent node (``.../implement``)."""
    return ctx.state.peek(f"{task_prefix(ctx.path)}/{AGENT_NODE}")


def implementer_of(node: NodeState | None) -> str | None:
    chosen = node.get("executor_selected") if node is not None else None
    return str(chosen["role"]) if isinstance(chosen, dict) and chosen.get("role") else None


def documents(state: EngineState) -> dict[str, str]:
    """The specification documents loaded once when the run started."""
    found = state.peek(CONTEXT_NODE)
    docs: Any = found.get("documents") if found is not None else None
    return dict(docs) if isinstance(docs, dict) else {}
