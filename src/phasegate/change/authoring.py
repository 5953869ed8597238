"""The proposal author's steps of ``plan``: proposal.md, specs/*.md, tasks.md, reproposal.

WF-R3 in strict order: proposal.md, then each spec (dependencies first, one
call per spec), then tasks.md, whose frontmatter code makes sure carries
``change_id``. Each step is committed before the next begins, so a killed
run continues with the step it was in.
"""

from __future__ import annotations

from phasegate.change.calls import AgentCalls, missing_files
from phasegate.change.handle import Change
from phasegate.change.prompts import proposal_prompt, reproposal_prompt, spec_prompt, tasks_prompt
from phasegate.change.specfiles import snapshot_bases, spec_order
from phasegate.change.state import ChangeState, PlanStep
from phasegate.change.tasks import ensure_change_id, read_tasks


class PlanAuthor:
    """Runs the proposal author's steps and moves the plan's step forward."""

    def __init__(self, change: Change, calls: AgentCalls) -> None:
        self.change = change
        self.calls = calls

    def limit(self, state: ChangeState) -> int:
        return state.planning_iterations

    def advance(self, state: ChangeState, step: PlanStep) -> None:
        """Record that the plan moved on to ``step`` and commit it."""
        assert state.plan is not None
        state.plan.step = step
        self.change.record("plan.step", step=step, iteration=state.plan.iteration)
        self.change.save(state)

    def proposal(self, state: ChangeState) -> None:
        limit = self.limit(state)
        self.calls.produce(
            state,
            role="proposal-author",
            step="proposal",
            iteration=1,
            build=lambda: proposal_prompt(self.change, state, limit),
            missing=missing_files(self.change, "proposal.md"),
        )
        self.advance(state, "specs")

    def specs(self, state: ChangeState) -> None:
        assert state.plan is not None
        plan, limit = state.plan, self.limit(state)
        order, warnings = spec_order(self.change.proposal_path.read_text(encoding="utf-8"))
        for warning in warnings:
            self.change.record("specs.warning", message=warning)
        if order is None and "*" not in plan.specs_done:
            # proposal.md names no specs: one call writes whatever specs it needs.
            self.calls.produce(
                state,
                role="proposal-author",
                step="specs",
                iteration=1,
                build=lambda: spec_prompt(self.change, state, None, [], limit),
                missing=lambda: [],
            )
            plan.specs_done.append("*")
        for name in order or []:
            if name in plan.specs_done:
                continue
            done = [n for n in plan.specs_done if n != "*"]
            self.calls.produce(
                state,
                role="proposal-author",
                step=f"spec:{name}",
                iteration=1,
                build=lambda name=name, done=done: spec_prompt(  # type: ignore[misc]
                    self.change, state, name, done, limit
                ),
                missing=missing_files(self.change, f"specs/{name}"),
            )
            plan.specs_done.append(name)
            snapshot_bases(self.change, state)
            self.change.record("spec.written", spec=name)
            self.change.save(state)
        snapshot_bases(self.change, state)
        self.advance(state, "tasks")

    def tasks(self, state: ChangeState) -> None:
        limit = self.limit(state)
        self.calls.produce(
            state,
            role="proposal-author",
            step="tasks",
            iteration=1,
            build=lambda: tasks_prompt(self.change, state, limit),
            missing=self.missing_tasks,
        )
        self.ensure_tasks_frontmatter()
        self.advance(state, "challenge")

    def missing_tasks(self) -> list[str]:
        absent = missing_files(self.change, "tasks.md")()
        if absent:
            return absent
        if read_tasks(self.change.tasks_path).task_count == 0:
            return [f"{self.change.rel(self.change.tasks_path)} (it lists no tasks)"]
        return []

    def ensure_tasks_frontmatter(self) -> None:
        fixed = ensure_change_id(self.change.tasks_path, self.change.id)
        if fixed is not None:
            self.change.record("tasks.frontmatter_fixed", reason=fixed, change_id=self.change.id)

    def reproposal(self, state: ChangeState) -> None:
        assert state.plan is not None
        plan, limit = state.plan, self.limit(state)
        issues = list(plan.issues)
        self.calls.produce(
            state,
            role="proposal-author",
            step="reproposal",
            iteration=plan.iteration,
            build=lambda: reproposal_prompt(self.change, state, issues, limit),
            missing=lambda: missing_files(self.change, "proposal.md")() + self.missing_tasks(),
        )
        self.ensure_tasks_frontmatter()
        snapshot_bases(self.change, state)
        self.advance(state, "challenge")
