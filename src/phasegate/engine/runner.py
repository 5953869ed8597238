"""Run (or resume) a work item: commands, ``--phase``/``--until``, half-done phases, completion.

``run`` is also how an interrupted run continues: every decision is taken
from the recorded state, so running again resumes without redoing work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from phasegate.engine.budget_gate import BudgetGuard
from phasegate.engine.builtin_gates import (
    PARTIAL_CHOICES,
    Declined,
    confirm_warning,
    partial_phase,
    withdraw_warning,
)
from phasegate.engine.calls import Backends
from phasegate.engine.item import WorkItem
from phasegate.engine.run import Run
from phasegate.engine.state import EngineState
from phasegate.engine.status import (
    again_command,
    command_for,
    command_runs_in,
    completion_summary,
    current_label,
    render_message,
)
from phasegate.engine.walk import (
    Asker,
    CaughtUp,
    End,
    NoTerminal,
    RunOptions,
    RunStop,
    TopCursor,
    definition_path,
)
from phasegate.engine.worktree import ensure_worktree, finish_worktree
from phasegate.errors import BadInputError, BlockedError, ConfigError, WaitingForHuman
from phasegate.state.journal import utc_now
from phasegate.workflow.model import AgentNode, Workflow
from phasegate.workflow.transitions import phase_node, phase_refusal, validate_transition

__all__ = [
    "PARTIAL_CHOICES",
    "Asker",
    "NoTerminal",
    "RunOptions",
    "RunOutcome",
    "Runner",
]

OutcomeStatus = Literal["completed", "phase-done", "stopped"]


class CommandRefused(BlockedError):
    """A workflow command run on an item at a label it does not act on (seed 002's
    ``ChangeNotReady``): the message says where the item stands and what to run."""


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended."""

    status: OutcomeStatus
    state: EngineState
    message: str
    label: str | None = None


class Runner:
    """Runs one work item under its run lock."""

    def __init__(
        self,
        item: WorkItem,
        backends: Backends,
        asker: Asker | None = None,
        options: RunOptions | None = None,
    ) -> None:
        self.item = item
        self.backends = backends
        self.asker: Asker = asker or NoTerminal()
        self.options = options or RunOptions()

    @property
    def workflow(self) -> Workflow:
        return self.item.workflow

    def run(self) -> RunOutcome:
        if self.options.no_review and not self.workflow.allow_no_review:
            raise BadInputError(
                f"--no-review: workflow {self.workflow.name!r} refuses to skip its reviewers "
                "(they are part of what completes an item); run without --no-review"
            )
        self.item.config.check_backend_names()
        self.item.config.check_workflow_names(self.item.repo)
        self._check_role_settings()
        with self.item.run_lock():
            self.item.remove_stale_temp_files()
            state = self.item.load()  # everything is checked before anything is written
            # A state behind its journal is caught up first: the command is judged by
            # where the interrupted run had got to (see ``_run``).
            refusal = None if self._moves_behind(state) else self._command_refusal(state)
            if refusal is not None:
                return refusal
            for label in (self.options.phase, self.options.until):
                if label is not None:
                    self._top_node(label)  # an unknown phase is refused, the item ended or not
            if state.status == "completed" and self.options.phase is not None:
                raise BadInputError(
                    f"--phase {self.options.phase}: {self.item.name} is already complete and "
                    "a completed item's phases are not run again; start a new item with "
                    "phasegate new"
                )
            if state.status == "completed":
                self.item.view.completed(state)
                return RunOutcome("completed", state, f"{self.item.name} is already complete")
            if state.at == "@end":
                return self._ended(state)
            # A run killed between replacing the state file and writing the files derived
            # from it (status.json, .meta.json) left those behind: they are written again
            # before anything reads them (the team workflow's actions do).
            self.item.view.render(state)
            if state.worktree:  # agents work there: it must be a working checkout
                ensure_worktree(self.item.repo, state.worktree, self.item.name, state["branch"])
            run = Run(self.item, state, self.backends, self.asker, self.options)
            self.backends.guard = BudgetGuard(run)
            try:
                return self._run(run)
            except RunStop as stop:
                self.item.save(state, durable=True)
                label = current_label(self.workflow, state)
                if stop.status == "stopped":
                    return RunOutcome("stopped", state, self._stop_message(state, label), label)
                return RunOutcome("phase-done", state, stop.message, label)
            finally:
                # However the run ends, a coalesced state commit is written.
                self.item.flush()

    def _check_role_settings(self) -> None:
        """Refuse, before any call, a setting that cannot configure the backend of one of
        the workflow's roles (an unknown key, a wrong type): only the settings are read,
        so a role needed late does not have its CLI started now."""
        from phasegate.agents.registry import check_backend_settings

        config = self.item.config
        groups: dict[str, tuple[str, dict[str, Any], list[str]]] = {}
        for role in self.workflow.roles:
            if role not in config.roles and "default" not in config.roles:
                continue  # bound nowhere: said when the role is called (it may never be)
            binding = self.backends.binding(role)
            if binding is None:
                continue  # a backend given in code
            settings: dict[str, Any] = dict(config.backends.get(binding.backend, {}))
            settings.update(binding.backend_settings())
            settings.setdefault("base_dir", str(self.item.repo))
            key = f"{binding.backend}|{sorted(settings.items())!r}"
            groups.setdefault(key, (binding.backend, settings, []))[2].append(role)
        for backend, settings, roles in groups.values():
            try:
                check_backend_settings(backend, settings)
            except ConfigError as exc:
                message = config.setting_where(str(exc), roles[0])
                used_by = f"role{'s' if len(roles) > 1 else ''} {', '.join(roles)}"
                raise ConfigError(
                    message.replace(f"backend {backend!r}:", f"backend {backend!r} ({used_by}):", 1)
                ) from None

    def _ended(self, state: EngineState) -> RunOutcome:
        """An item that reached an end other than done (dropped, blocked): nothing is left
        to run, and nothing is written."""
        end = str(state.data.get("end_label") or state.status)
        if state.status == "blocked":
            raise BlockedError(f"{self.item.name} ended blocked at {end}; nothing to run")
        message = f"{self.item.name} already ended at {end} ({state.status}); nothing to run"
        return RunOutcome("stopped", state, message, end)

    # -- commands (seed 002's plan / impl / archive) -----------------------------------------

    def _command_refusal(self, state: EngineState) -> RunOutcome | None:
        name = self.options.command
        if name is None:
            return None
        command = self.workflow.commands.get(name)
        if command is None:
            known = ", ".join(self.workflow.commands) or "none"
            raise BadInputError(
                f"workflow {self.workflow.name!r} has no command {name!r} ({known})"
            )
        label = current_label(self.workflow, state) or ""
        if not command.runs_in or label in command.runs_in:
            return None
        ended = state.status == "completed" or state.at == "@end"
        # A label no command runs in (a gate without a label) goes on with the command
        # whose run reached it.
        if (
            not ended
            and not command_runs_in(self.workflow, label)
            and command_for(self.workflow, label) == name
        ):
            return None
        refusal = command.otherwise.get(label) or command.otherwise.get("*")
        if refusal is None and ended:
            return None  # nothing is left to run: the run says it is complete (or ended)
        message = render_message(
            refusal.message if refusal else "{{ item }} is in phase {{ label }}. Next: {{ next }}",
            self.workflow,
            state,
            label,
            name,
        )
        if refusal is None or refusal.exit == "blocked":
            raise CommandRefused(message)
        if refusal.exit == "waiting":
            raise WaitingForHuman(message)
        return RunOutcome("stopped", state, message, label)

    def _stop_message(self, state: EngineState, label: str | None) -> str:
        return render_message(
            "{{ item }} is at {{ label }}. Next: {{ next }}",
            self.workflow,
            state,
            label,
            self.options.command,
        )

    # -- the run --------------------------------------------------------------------------

    def _run(self, run: Run) -> RunOutcome:
        from phasegate.engine.protect import guard_of

        # The guard of phasegate's files is made before any commit or call: a commit that
        # found none would write unguarded while a parallel item's first call takes its
        # record, and the commit's own writes would be taken for that agent's.
        guard_of(self.item)
        state = run.state
        options = self.options
        if options.command is not None:
            command = self.workflow.commands[options.command]
            run.stop_labels = set(command.stops_at)
            run.started_labels = {current_label(self.workflow, state) or ""}
        behind = self._moves_behind(state)
        reached = self._catch_up(run)
        if reached is not None:
            return self._finish(run, reached)
        if behind:
            run.save()  # where the journal says the item is, whatever the command does now
            refusal = self._command_refusal(state)
            if refusal is not None:
                return refusal
        target = self._top_node(options.phase) if options.phase is not None else None
        at = state.at if state.at is not None and not state.at.startswith("@") else None
        withdraw_warning(run, target or at or self.workflow.start_node(state.mode))
        if target is not None:
            declined = self._jump(run, target)
            if declined is not None:
                return declined
        else:
            if options.until is not None:
                target = self._top_node(options.until)
                done = state.peek(target)
                if done is not None and done.get("outcome") is not None and state.at != target:
                    return RunOutcome(
                        "phase-done",
                        state,
                        f"{options.until} is already complete; nothing to run",
                        options.until,
                    )
            self._resume_partial(run)
        end = run.walk()
        return self._finish(run, end)

    def _catch_up(self, run: Run) -> End | None:
        """A run killed after it moved on from a node and before a state commit said so left
        the state file behind its journal: the moves the journal records from the state's
        node are walked again first (each result reused, nothing asked, no stop), so what
        this run checks and asks (a phase left half done, a transition warning) is about
        where the interrupted run was. The end reached so, if it was one."""
        state = run.state
        recorded = self.item.recorded()
        moves = self._moves_behind(state)
        reached: End | None = None
        if moves:
            run.replay_moves = moves
            try:
                reached = run.walk()
            except CaughtUp:
                pass
            finally:
                run.replay_moves = None
        # Moves made again, or not to be made (the walk is elsewhere): no longer held.
        for key in recorded.move_keys():
            self.item.applied(key)
        if reached is None and state.at is not None and not state.at.startswith("@"):
            # The node the walk is at started in the journal only, and did work there: it is
            # a phase left half done (``--partial`` applies to it), not one to start again
            # with no question. With no work recorded, going on is starting it afresh.
            found = state.peek(state.at)
            if found is not None and not found.get("started") and found.get("outcome") is None:
                began = recorded.started(state.at, found.visit)
                if began is not None and recorded.worked_on(state.at, found.visit):
                    state.node(state.at)["started"] = began
        return reached

    def _moves_behind(self, state: EngineState) -> int:
        """How many moves of the top level the journal's tail records from the node the
        state is at (0: the state is not behind its journal)."""
        at = state.at if state.at is not None else self.workflow.start_node(state.mode)
        if at.startswith("@"):
            return 0
        found = state.peek(at)
        # The visit the walk is in (one it enters afresh when none is recorded yet).
        visit = (found.visit if found is not None else 0) or 1
        return self.item.recorded().moves_from(at, visit)

    def _limit(self, run: Run, path: str) -> int | None:
        """The review iterations a node started by ``--phase`` or ``--partial fresh`` may
        have (as the walk's own start event says): its budget's, for an agent node only."""
        node = self.workflow.node(path)
        return run.limit(path, node) if isinstance(node, AgentNode) else None

    def _top_node(self, label: str) -> str:
        found = phase_node(self.workflow, label)
        if found is not None:
            return found
        raise BadInputError(phase_refusal(self.workflow, label))

    def _jump(self, run: Run, target: str) -> RunOutcome | None:
        """``run --phase P``: validate the transition, then put the cursor at P; a start
        declined at its transition warning stops the run (the outcome says so)."""
        state = run.state
        at = state.at
        if at == target:
            node = state.peek(target)
            if node is not None and node.get("started") and node.get("outcome") is None:
                self._resume_partial(run)
                return None
            if node is None or not node.get("started"):
                return None  # the expected next node: its prerequisites are checked as it starts
        current = at if at is not None and not at.startswith("@") else None
        left = state.peek(current) if current is not None else None
        result = validate_transition(
            self.workflow,
            current,
            target,
            run.artifacts(),
            completed=run.completed_nodes(),
            skipped=self.workflow.modes[state.mode].skip,
            # an unfinished current node is "in progress" only once it has started
            started=[current] if current is not None and left and left.get("started") else [],
            decisions={
                name: (record.get("answer") or {}).get("choice")
                if record.get("status") == "answered"
                else None
                for name, record in state.decisions.items()
            },
            item=self.item.name,
        )
        if result.type == "blocked":
            self.item.record(
                "transition.blocked", to=target, current=at, message=result.message, sync_now=True
            )
            raise BlockedError(result.message or f"cannot start {target}")
        if result.type == "warning":
            try:
                confirm_warning(run, target, result.message or "")
            except Declined:  # the phases go on in order: said, not waited for
                label = current_label(self.workflow, state)
                message = (
                    f"not starting {run.label(target)}: declined. "
                    f"Next: {again_command(self.workflow, self.item.name, label)}"
                )
                return RunOutcome("stopped", state, message, label)
        self.item.record(
            "transition", from_phase=at, to=target, type=result.type, message=result.message
        )
        if at is not None and not at.startswith("@"):
            left = state.peek(at)
            if left is not None and left.get("started") and left.get("outcome") is None:
                self.item.record("phase.abandoned", phase=at)
            if at != target:
                run.withdraw_left(
                    at, f"the run moved on from {run.label(at)} to {run.label(target)} (--phase)"
                )
        TopCursor(state).set(target)
        run.enter(target, None)
        state.node(target)["started"] = utc_now()  # the transition was just validated
        self.item.record(
            "node.started",
            node=target,
            kind=self.workflow.node(target).kind,
            phase=run.label(target),
            visit=state.node(target).visit,
            mode=state.mode,
            max_iterations=self._limit(run, target),
            no_review=self.options.no_review,
        )
        if self.options.no_review:
            state.node(target)["no_review"] = True
        run.save(lazy=True)
        return None

    def _resume_partial(self, run: Run) -> None:
        """A node started but not completed: continue, start fresh, or review what is there."""
        state = run.state
        at = state.at
        if at is None or at.startswith("@") or self.workflow.partial != "ask":
            return
        node = self.workflow.node(definition_path(at))
        found = state.peek(at)
        if (
            not isinstance(node, AgentNode)
            or found is None
            or not found.get("started")
            or found.get("outcome") is not None
        ):
            return
        if self.options.partial is not None and self.options.partial not in PARTIAL_CHOICES:
            raise BadInputError(f"--partial must be one of {', '.join(PARTIAL_CHOICES)}")
        choice = partial_phase(run, at, found.iteration, found.stage)
        if self.options.no_review:
            state.node(at)["no_review"] = True
        if choice == "fresh":
            run.enter(at, None)
            state.node(at)["started"] = utc_now()
            self.item.record(
                "node.started",
                node=at,
                kind=node.kind,
                phase=run.label(at),
                visit=state.node(at).visit,
                mode=state.mode,
                max_iterations=self._limit(run, at),
                no_review=self.options.no_review,
            )
        elif choice == "review" and node.all_reviewers() and not state.node(at).get("no_review"):
            state.node(at).stage = "review:0"
        run.save()

    # -- the end ----------------------------------------------------------------------------

    def _finish(self, run: Run, end: End) -> RunOutcome:
        state = run.state
        now = utc_now()
        state.at = "@end"
        # Which end was reached: a workflow may have several (done, dropped...).
        state.data["end_label"] = end.label
        if end.status == "blocked":
            state.status = "blocked"
            self.item.record("item.blocked", node=end.path, message=end.message, sync_now=True)
            self.item.save(state, durable=True)
            raise BlockedError(end.message or f"{self.item.name} ended blocked at {end.label}")
        state.status = "completed" if end.status == "completed" else end.status
        run.withdraw_left(None, f"{self.item.name} ended at {end.label}")
        state["completed"] = now
        state["summary"] = self.item.view.summary(state) or completion_summary(self.workflow, state)
        self.item.save(state, durable=True)
        self.item.view.completed(state)
        self.item.record(
            "item.completed",
            summary=state["summary"],
            status=state.status,
            sync_now=True,
            **({"message": end.message} if end.message else {}),
        )
        message = str(state["summary"])
        if end.message:
            message = f"{message} {end.message}"
        if state.worktree:
            confirm = self.asker.confirm if self.asker.interactive else None
            branch = state["branch"]

            def journal(text: str, removed: bool) -> None:
                self.item.record("worktree.finish", branch=branch, removed=removed, message=text)

            text, _ = finish_worktree(
                self.item.repo, self.item.name, state.worktree, branch, confirm, journal
            )
            message = f"{message} {text}"
        # An end that stops the item (status: stopped) is said as such, with its message.
        ended: OutcomeStatus = "stopped" if state.status == "stopped" else "completed"
        return RunOutcome(ended, state, message, end.label)
