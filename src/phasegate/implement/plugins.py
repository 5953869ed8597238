"""The implement workflow's parsers, selectors and prompt context.

Parsers turn PLAN.md into the phases and tasks the engine's ``foreach`` walks
(and a checkpoint's commands); the selectors pick, at run time, the agent a
task names and the reviewer its changes call for; the context provider builds
each prompt's bounded package. Actions and predicates are in
:mod:`phasegate.implement.actions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from phasegate.agents.base import PromptPart
from phasegate.engine.plugin_api import (
    ContextProvider,
    ItemParser,
    Parsed,
    PluginContext,
    ReviewerSelector,
    Selection,
    Task,
)
from phasegate.engine.prompting import clip
from phasegate.errors import BadInputError, BlockedError, NotFoundError
from phasegate.implement import cycles
from phasegate.implement.context import context_package, review_request
from phasegate.implement.parallel import guard_plan, remember_plan
from phasegate.implement.patterns import FAILURE_RATE_LIMIT, failure_rate
from phasegate.implement.plan import Plan, PlanPhase, PlanTask, parse_plan
from phasegate.implement.selection import Ranked, analyze_changes, rank_reviewers, reasoning
from phasegate.implement.snapshots import TaskChanges, changes_between, snapshot
from phasegate.implement.where import (
    PHASES,
    TASKS,
    documents,
    implementer_of,
    load_plan,
    plan_rel,
    roster,
    settings_of,
    spec_dir_rel,
)

# -- parsers -------------------------------------------------------------------------------


class PhasesParser(ItemParser):
    """The plan's phases, in order; a phase is done when all its tasks and checkpoints are."""

    name = "implement-phases"

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        plan = load_plan(ctx)
        items = tuple(
            Task(key=p.key, title=p.title, done=p.done, line=p.line, parallel=p.parallel)
            for p in plan.phases
        )
        return Parsed(items, "plan", tuple(plan.notes(plan_rel(ctx.state))))

    def count(self, path: Path) -> int:
        return len(parse_plan(path.read_text(encoding="utf-8"), path).tasks())


def _phase(ctx: PluginContext) -> PlanPhase:
    assert ctx.task is not None
    plan = load_plan(ctx)
    phase = plan.phase(ctx.task.key)
    if phase is None:
        tasks = ctx.state.peek(f"{PHASES}[{ctx.task.key}]/{TASKS}")
        known = (tasks.get("items") or {}) if tasks is not None else {}
        if known and not any(plan.task(key) is not None for key in known):
            # Taken out of the plan with all its tasks: it ends (its tasks are removed ones).
            return PlanPhase(ctx.task.key, ctx.task.title, 0, False, (), ())
        raise BlockedError(
            f"{plan_rel(ctx.state)} no longer has the phase {ctx.task.title!r}; "
            "restore its heading, or start the plan again under a new work item"
        )
    return phase


class TasksParser(ItemParser):
    """The tasks of the current phase (validation checkpoints aside), by their hashes."""

    name = "implement-tasks"

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        return Parsed(phase_items(_phase(ctx)), "plan")


def phase_items(phase: PlanPhase) -> tuple[Task, ...]:
    """The items of a phase's ``tasks`` loop: its tasks (checkpoints aside), with what each
    waits for."""
    return tuple(
        Task(
            key=t.key,
            title=t.title,
            deps=deps,
            done=t.done,
            line=t.line,
            data=t.data(),
            parallel=t.parallel,
        )
        for t, deps in zip(phase.tasks, task_dependencies(phase.tasks), strict=True)
    )


def task_dependencies(tasks: Sequence[PlanTask]) -> list[tuple[str, ...]]:
    """What each task waits for (seed 004: parallel tasks within a phase, the phase's order
    otherwise): a sequential task waits for every task before it; a task marked parallel,
    for every task up to the last sequential one before it. Tasks already ticked count too,
    so a ticked task between two open ones never lets them run at once."""
    found: list[tuple[str, ...]] = []
    before: list[str] = []  # every task so far
    barrier: tuple[str, ...] = ()  # every task up to the last sequential one
    for task in tasks:
        if task.parallel:
            found.append(barrier)
        else:
            found.append(tuple(before))
            barrier = (*before, task.key)
        before.append(task.key)
    return found


class CheckpointCommands(ItemParser):
    """A phase's validation checkpoint: the configured checks, when it has an open one."""

    name = "implement-checkpoint"

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        phase = _phase(ctx)
        open_ones = [c for c in phase.checkpoints if not c.done]
        if not open_ones:
            return Parsed(())
        commands = ctx.item.config.commands
        names = settings_of(ctx).checks
        chosen = list(names) if names is not None else list(commands)
        ctx.record(
            "implement.checkpoint",
            phase=phase.title,
            checkpoints=[c.title for c in open_ones],
            checks=chosen,
        )
        return Parsed(tuple(Task(key=n, data={"command": commands.get(n)}) for n in chosen))


# -- selectors -----------------------------------------------------------------------------


def _where(ctx: PluginContext) -> str:
    task = ctx.task
    line = f":{task.line}" if task is not None and task.line else ""
    title = f" (task {task.title!r})" if task is not None else ""
    return f"{plan_rel(ctx.state)}{line}{title}"


class AgentSelector(ReviewerSelector):
    """The agent a task names (``[`agent: ...`]``), resolved from agent files and config."""

    name = "implement-agent"

    def select(self, ctx: PluginContext, settings: Mapping[str, Any]) -> Selection | None:
        assert ctx.task is not None
        named = ctx.task.data.get("agent")
        if named:
            agent = roster(ctx).get(str(named), _where(ctx)).name
            reason = f"{_where(ctx)} names [`agent: {agent}`]"
        else:
            fallback = settings_of(ctx).default_agent
            if fallback:
                agent = roster(ctx).get(fallback, "workflows.implement.settings.default_agent").name
            else:
                agent = "implementer"
            reason = f"{_where(ctx)} names no agent: {agent} implements it"
        entry = cycles.task_entry(ctx.state, ctx.task.key, ctx.task.title)
        entry["implementer"] = agent
        entry["max_cycles"] = int(ctx.state.data.get("max_cycles") or settings_of(ctx).max_cycles)
        return Selection(role=agent, reason=reason)


def task_details(ctx: PluginContext, plan: Plan | None = None) -> str:
    """The task's sub-items as PLAN.md has them now: a person may have clarified them
    since its phase began (after its agent answered BLOCKED, say)."""
    assert ctx.task is not None
    try:
        found = (plan or load_plan(ctx)).task(ctx.task.key)
    except (BadInputError, NotFoundError):
        found = None
    if found is not None:
        return found.details
    return str(ctx.task.data.get("details") or "")


def task_changes(ctx: PluginContext) -> TaskChanges:
    """What the current task changed since it started."""
    assert ctx.task is not None
    entry = cycles.peek_task(ctx.state, ctx.task.key) or {}
    return changes_between(ctx.workdir, entry.get("_base_tree"), snapshot(ctx.workdir))


class ReviewerChoice(ReviewerSelector):
    """Seed 004's dynamic reviewer selection, with its history checks (journaled by reason)."""

    name = "implement-reviewer"

    def select(self, ctx: PluginContext, settings: Mapping[str, Any]) -> Selection | None:
        task, node = ctx.task, ctx.state.peek(ctx.path)
        assert task is not None and node is not None
        guard_plan(ctx)  # right after the executor's call: the plan is not its to change
        if not task.data.get("review", settings_of(ctx).review_by_default):
            return None
        implementer = implementer_of(node) or (cycles.peek_task(ctx.state, task.key) or {}).get(
            "implementer"
        )
        agents = roster(ctx).agents
        candidates = [a for n, a in agents.items() if n != implementer] or list(agents.values())
        changes = task_changes(ctx)
        focus = [str(f) for f in task.data.get("review_focus") or []]
        text = f"{task.title}\n{task_details(ctx)}"
        analysis = analyze_changes(text, focus, changes.files, changes.added)
        ranked = rank_reviewers(candidates, analysis)
        chosen, history = self._choose(ctx, ranked, implementer, agents)
        best = next((r for r in ranked if r.agent == chosen), None)
        entry = cycles.task_entry(ctx.state, task.key, task.title)
        limit = int(ctx.state.data.get("max_cycles") or settings_of(ctx).max_cycles)
        cycles.reviewer_selected(entry, chosen, node.visit, node.iteration, limit)
        return Selection(
            role=chosen,
            reason=reasoning(analysis, best, chosen, history),
            focus=tuple(dict.fromkeys((*focus, *analysis.priorities))),
            data={
                "cycle": node.iteration,
                "priorities": list(analysis.priorities),
                "files": list(changes.files[:20]),
                "scores": {r.agent: r.score for r in ranked[:5]},
            },
        )

    def _choose(
        self, ctx: PluginContext, ranked: list[Ranked], implementer: str | None, agents: Any
    ) -> tuple[str, str]:
        assert ctx.task is not None
        history: list[str] = []
        if ranked and ranked[0].score > 0:
            chosen = ranked[0].agent
        elif "the-architect" in agents and implementer != "the-architect":
            chosen, history = "the-architect", ["no specific review need: the architect reviews"]
        else:
            chosen = ranked[0].agent if ranked else "reviewer"
        entry = cycles.peek_task(ctx.state, ctx.task.key) or {}
        suggested = entry.get("_suggested")
        if isinstance(suggested, dict) and suggested.get("agent") != chosen:
            wanted = str(suggested.get("agent"))
            if wanted in agents and wanted != implementer:
                chosen = wanted
                history.append(str(suggested.get("reason")))
            else:
                history.append(f"{suggested.get('reason')}, but {wanted} is not an agent here")
        rates = cycles.record(ctx.state)["global_patterns"]["reviewer_failure_rates"]
        minimum = settings_of(ctx).failure_rate_min_reviews
        rate, total = failure_rate(rates, chosen)
        if total >= minimum and rate > FAILURE_RATE_LIMIT:
            for other in ranked:
                other_rate, other_total = failure_rate(rates, other.agent)
                if other.agent != chosen and (
                    other_total < minimum or other_rate <= FAILURE_RATE_LIMIT
                ):
                    history.append(
                        f"{chosen}'s failure rate {rate:.2f} over {total} reviews is above "
                        f"{FAILURE_RATE_LIMIT}: {other.agent} reviews instead"
                    )
                    chosen = other.agent
                    break
        return chosen, "; ".join(history)


# -- prompt context ------------------------------------------------------------------------


class TaskPackage(ContextProvider):
    """The executor's context package, or the reviewer's review request with the task's diff."""

    name = "implement-package"

    def parts(self, ctx: PluginContext, role: str) -> Sequence[PromptPart]:
        node = ctx.state.peek(ctx.path)
        if ctx.task is None or node is None:
            return []
        if node.stage.startswith("review"):
            return self._review(ctx, role)
        return self._execute(ctx, role)

    def _execute(self, ctx: PluginContext, role: str) -> list[PromptPart]:
        assert ctx.task is not None
        remember_plan(ctx)  # built right before the executor's call: put back after it
        settings = settings_of(ctx)
        plan = load_plan(ctx)
        phase = plan.phase(str(ctx.task.data.get("phase")))
        done = [t.title for t in plan.tasks() if t.done and not t.checkpoint]
        others = [
            t.title
            for t in plan.tasks()
            if not t.done and not t.checkpoint and t.key != ctx.task.key
        ]
        package = context_package(
            spec_dir=spec_dir_rel(ctx.state),
            documents=documents(ctx.state),
            limit=settings.context_chars,
            phase=phase.title if phase is not None else "",
            done=done,
            task={"title": ctx.task.title, "details": task_details(ctx, plan)},
            checkpoints=[c.title for c in phase.checkpoints] if phase is not None else [],
            checks=list(settings.checks or ctx.item.config.commands),
            others=others,
            plan=plan_rel(ctx.state),
            state_file=settings.state_file,
        )
        parts = [PromptPart("Context package", package)]
        agent = roster(ctx).agents.get(role)
        if agent is not None and agent.instructions:
            parts.insert(0, PromptPart(f"You are {role}", clip(agent.instructions, 8000)))
        return parts

    def _review(self, ctx: PluginContext, role: str) -> list[PromptPart]:
        assert ctx.task is not None
        node = ctx.state.peek(ctx.path)
        assert node is not None
        selected = (node.get("selected") or {}).get(f"{node.iteration}:reviewer") or {}
        entry = cycles.peek_task(ctx.state, ctx.task.key) or {}
        tracking = entry.get("pattern_tracking") or {}
        previous: list[str] = []
        if int(tracking.get("same_issue_count", 0)) > 0:
            previous.append("recurring: " + ", ".join(tracking.get("recurring_patterns") or []))
        earlier = [
            r.get("feedback", "")
            for r in entry.get("reviewers") or []
            if r.get("status") == "NEEDS_REVISION"
        ]
        previous += [f for f in earlier[-2:] if f]
        changes = task_changes(ctx)
        focus = list(selected.get("focus") or [])
        request = review_request(
            cycle=node.iteration,
            max_cycles=int(ctx.state.data.get("max_cycles") or 3),
            task=ctx.task.title,
            implementer=implementer_of(node) or str(entry.get("implementer") or "implementer"),
            summary=str(node.get("changes") or ""),
            files=changes.files,
            focus=focus,
            previous=previous,
            aspects=[*focus, "correctness", "tests"],
        )
        details = task_details(ctx).strip()
        parts = [PromptPart("Review request", request)]
        if details:
            parts.append(PromptPart("The task's sub-items", details))
        parts.append(PromptPart("Changes of this task", changes.diff or "(no changes found)"))
        return parts


PHASES_PARSER = PhasesParser()
TASKS_PARSER = TasksParser()
CHECKPOINT_COMMANDS = CheckpointCommands()
AGENT_SELECTOR = AgentSelector()
REVIEWER_SELECTOR = ReviewerChoice()
TASK_PACKAGE = TaskPackage()
