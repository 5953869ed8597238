"""Where an implement work item's things are: its plan, spec folder, agents, settings, nodes."""

from __future__ import annotations

from dataclasses import replace
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
#: In the item's data: the tasks added to PLAN.md while a run went on, found when every
#: phase had ended (the run goes back to read the plan and does them).
ADDED = "added_during_run"
#: In the item's data: the tasks the run had finished that a person unticked in PLAN.md
#: while it went on, found when every phase had ended (the run goes back to do them).
UNTICKED = "unticked_during_run"
#: A task's gates that wait for a person, and the node a task ends at.
WAITING_GATES = (
    "unclear",
    "escalate",
    "manual-fix",
    "aborted",
    "failed",
    "blocked",
    "review-failed",
    "failed-aborted",
)
TASK_END = "task-done"
#: In the item's data: decisions withdrawn because their task was ticked by hand, not
#: journaled yet (the view journals them when the state is next committed).
WITHDRAWN_BY_TICK = "withdrawn_by_tick"
#: In the item's data: phases whose heading a person renamed after the run began, by
#: the key the heading gives them now, to the key the run knows them by.
PHASE_ALIASES = "renamed_phases"


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
    return known_phases(read_plan(plan_path(ctx), plan_rel(ctx.state)), ctx.state)


def known_phases(plan: Plan, state: EngineState) -> Plan:
    """``plan`` with each phase whose heading was renamed since the run began keyed as the
    run knows it (its title is the new one), so its tasks go on where they were."""
    aliases = state.data.get(PHASE_ALIASES) or {}
    keys = {p.key for p in plan.phases}
    found = {new: old for new, old in aliases.items() if new in keys and old not in keys}
    if not found:
        return plan
    phases = tuple(
        replace(
            p,
            key=found[p.key],
            tasks=tuple(replace(t, phase=found[p.key]) for t in p.tasks),
            checkpoints=tuple(replace(t, phase=found[p.key]) for t in p.checkpoints),
        )
        if p.key in found
        else p
        for p in plan.phases
    )
    return replace(plan, phases=phases)


def settings_of(ctx: PluginContext) -> ImplementSettings:
    return implement_settings(ctx.item.config, ctx.repo)


def roster(ctx: PluginContext) -> AgentRoster:
    """The repository's agents, read now (a file added a moment ago counts).

    Every ``roles.NAME`` of the config is one, also when another workflow has a role by
    that name (``qa``, ``architect``...): only this workflow's own roles bind backends.
    """
    return find_agents(ctx.repo, ctx.item.config, ctx.item.workflow.roles)


def refuse_unknown_agents(plan: Plan, found: AgentRoster, where: str) -> None:
    """Stop (exit 2) when an open task names an agent that is not known here, naming each
    such task with its line, and the known agents."""
    unknown = [
        f"{where}:{t.agent_at or t.line}: task {t.title!r} names agent {t.agent!r}"
        for t in plan.tasks()
        if not t.done and t.agent and t.agent not in found.agents
    ]
    if unknown:
        raise BadInputError(
            f"{'; '.join(unknown)}, which is not known here; known agents: "
            f"{', '.join(found.names()) or 'none'} "
            f"({found.advice(t.agent for t in plan.tasks() if t.agent)})"
        )


def refuse_unreviewable(plan: Plan, found: AgentRoster, where: str, default: str | None) -> None:
    """Stop (exit 2) before any agent is called when an open task that is reviewed has no
    one to review it: its implementer is the only agent here, and never reviews its own
    work (else the implementer's call would be made, then the run stop at its review)."""
    for t in plan.tasks():
        implementer = t.agent or default
        if t.done or t.checkpoint or not t.review or implementer not in found.agents:
            continue
        if not any(name != implementer for name in found.agents):
            raise BadInputError(
                f"{where}:{t.line}: task {t.title!r} has no reviewer: its implementer "
                f"{implementer} is the only agent here, and it never reviews its own work; "
                "add another agent (.claude/agents/NAME.md or a roles.NAME entry in "
                ".phasegate/config.yaml) or mark the task [`review: false`], then run again"
            )


def check_plan(root: Path, config: Any, roles: Any, rel: str) -> Plan:
    """PLAN.md at ``rel`` read and its open tasks' agents checked, before an item is made
    for it: an error in it, an unknown agent, or a reviewed task no other agent can review
    stops (exit 2) and nothing is made."""
    plan = read_plan(root / rel, rel)
    found = find_agents(root, config, roles)
    refuse_unknown_agents(plan, found, rel)
    refuse_unreviewable(plan, found, rel, implement_settings(config, root).default_agent)
    return plan


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
