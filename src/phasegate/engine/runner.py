"""Walk a work item through its workflow: transitions, partial phases, finish.

``run`` is also how an interrupted run continues: every decision is taken
from the recorded state, so running again resumes without redoing work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from phasegate.engine.dispatch import Backends
from phasegate.engine.review_loop import ReviewLoop
from phasegate.engine.workitem import WorkItem
from phasegate.engine.worktree import ensure_worktree, finish_worktree
from phasegate.errors import BadInputError, BlockedError, WaitingForHuman
from phasegate.state.atomic import remove_file
from phasegate.state.item import Cursor, ItemState
from phasegate.state.journal import utc_now
from phasegate.workflow.model import Phase, Workflow
from phasegate.workflow.transitions import TransitionResult, expected_next, validate_transition

PartialChoice = Literal["continue", "fresh", "review"]
PARTIAL_CHOICES: tuple[PartialChoice, ...] = ("continue", "fresh", "review")


class Asker(Protocol):
    """How the engine asks a person; the CLI supplies a terminal or a no-terminal one."""

    @property
    def interactive(self) -> bool: ...

    def choose(self, question: str, choices: Sequence[str], default: str) -> str: ...

    def confirm(self, question: str, default: bool) -> bool: ...


class NoTerminal:
    """The asker used without a terminal: it never waits on stdin."""

    interactive = False

    def choose(self, question: str, choices: Sequence[str], default: str) -> str:
        return default

    def confirm(self, question: str, default: bool) -> bool:
        return default


@dataclass(frozen=True)
class RunOptions:
    """Flags of ``phasegate run``."""

    phase: str | None = None
    until: str | None = None
    no_review: bool = False
    partial: PartialChoice | None = None
    yes: bool = False


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended."""

    status: Literal["completed", "phase-done"]
    state: ItemState
    message: str


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
        self.loop = ReviewLoop(item, backends)

    @property
    def workflow(self) -> Workflow:
        return self.item.workflow

    def run(self) -> RunOutcome:
        with self.item.run_lock():
            self._remove_stale_temp_files()
            state = self.item.load()
            if state.status == "completed":
                remove_file(self.item.history_path)
                return RunOutcome("completed", state, f"{self.item.name} is already complete")
            if state.worktree:  # agents work there: it must be a working checkout
                ensure_worktree(self.item.repo, state.worktree, self.item.name, state.branch)
            self.item.save(state)  # repairs a history file a crash left behind
            try:
                return self._walk(state)
            finally:
                # However the run ends, a coalesced state commit is written.
                self.item.flush()

    def _walk(self, state: ItemState) -> RunOutcome:
        if self.options.phase is not None:
            return self._single_phase(state, self.options.phase)
        if self.options.until is not None:
            self._known_phase(self.options.until)
        self._resume_partial(state)
        while True:
            phase = self._next_phase(state)
            if phase is None:
                return self._finish(state, None)
            if state.engine.cursor is None:
                self._enter(state, phase, check_warnings=False)
            if phase.kind == "finish":
                return self._finish(state, phase)
            self.loop.run(state, phase)
            if phase.name == self.options.until:
                return RunOutcome("phase-done", state, f"stopped after {phase.name} (--until)")

    def _remove_stale_temp_files(self) -> None:
        """Temp files an atomic write left when the process died; we hold the item's lock."""
        for name in (self.workflow.state_file, self.workflow.history_file):
            for stale in self.item.item_dir.glob(f".{name}.tmp-*"):
                stale.unlink(missing_ok=True)

    # -- choosing the phase ----------------------------------------------------

    def _skipped(self, state: ItemState) -> tuple[str, ...]:
        return self.workflow.modes[state.mode].skip

    def _completed(self, state: ItemState) -> set[str]:
        return {name for name, rec in state.phases.items() if rec.completed}

    def _next_phase(self, state: ItemState) -> Phase | None:
        if state.engine.cursor is not None:
            return self.workflow.phase(state.engine.cursor.phase)
        names = expected_next(
            self.workflow, state.current_phase, self._completed(state), self._skipped(state)
        )
        return self.workflow.phase(names[0]) if names else None

    def transition(self, state: ItemState, target: str) -> TransitionResult:
        """Validate moving ``state`` to phase ``target`` (interface 1)."""
        artifacts = {
            p.artifact: self.item.artifact_path(p.artifact).is_file()
            for p in self.workflow.phases
            if p.artifact
        }
        return validate_transition(
            self.workflow,
            state.current_phase,
            target,
            artifacts,
            completed=self._completed(state),
            skipped=self._skipped(state),
        )

    def _enter(self, state: ItemState, phase: Phase, *, check_warnings: bool) -> None:
        """Validate the transition into ``phase`` and start it (or raise)."""
        result = self.transition(state, phase.name)
        if result.type == "blocked":
            self.item.record(
                "transition.blocked",
                to=phase.name,
                current=state.current_phase,
                message=result.message,
                sync_now=True,
            )
            raise BlockedError(result.message or f"cannot start {phase.name}")
        if result.type == "warning" and check_warnings:
            self._confirm_warning(phase, result.message or "")
        self.item.record(
            "transition",
            from_phase=state.current_phase,
            to=phase.name,
            type=result.type,
            message=result.message,
        )
        if phase.kind == "finish":
            return
        if state.engine.cursor is not None and state.engine.cursor.phase != phase.name:
            self.item.record("phase.abandoned", phase=state.engine.cursor.phase)
        self.loop.start(state, phase, no_review=self.options.no_review)

    def _confirm_warning(self, phase: Phase, message: str) -> None:
        question = f"Warning: {message}. Start {phase.name} anyway?"
        if self.options.yes:
            answer, by = True, "flag"
        elif self.asker.interactive:
            answer, by = self.asker.confirm(question, False), "prompt"
        else:
            self.item.record(
                "decision.needed",
                id="transition-warning",
                phase=phase.name,
                question=question,
                sync_now=True,
            )
            raise WaitingForHuman(
                f"{message}: confirm by running again with --yes "
                f"(phasegate run {self.item.name} --phase {phase.name} --yes)"
            )
        self.item.record(
            "decision",
            id="transition-warning",
            phase=phase.name,
            question=question,
            answer="proceed" if answer else "stop",
            by=by,
            sync_now=True,
        )
        if not answer:
            raise WaitingForHuman(f"not starting {phase.name}: declined")

    # -- partial phases ---------------------------------------------------------

    def _resume_partial(self, state: ItemState) -> None:
        """A phase started but not completed: continue, start fresh, or review what is there."""
        cursor = state.engine.cursor
        if cursor is None:
            return
        choice: PartialChoice
        if self.options.partial is not None:
            choice, by = self.options.partial, "flag"
        elif self.asker.interactive:
            picked = self.asker.choose(
                f"Phase {cursor.phase} was started but not completed "
                f"(iteration {cursor.iteration}, at {cursor.stage}). Continue, start fresh, "
                "or review what is there?",
                PARTIAL_CHOICES,
                "continue",
            )
            choice, by = picked, "prompt"  # type: ignore[assignment]
        else:
            choice, by = "continue", "default"
        self.item.record(
            "decision",
            id="partial-phase",
            phase=cursor.phase,
            answer=choice,
            by=by,
            iteration=cursor.iteration,
            stage=cursor.stage,
        )
        phase = self.workflow.phase(cursor.phase)
        if self.options.no_review:
            cursor.no_review = True
        if choice == "fresh":
            state.engine.iterations = [r for r in state.engine.iterations if r.phase != phase.name]
            self.loop.start(state, phase, no_review=cursor.no_review)
        elif choice == "review" and phase.reviewer and not cursor.no_review:
            state.engine.cursor = Cursor(
                phase=phase.name,
                epoch=cursor.epoch,
                iteration=cursor.iteration,
                stage="review",
                changes=cursor.changes,
                no_review=False,
            )
            self.item.save(state)

    # -- single phase and finish ---------------------------------------------------

    def _known_phase(self, name: str) -> Phase:
        try:
            return self.workflow.phase(name)
        except KeyError:
            raise BadInputError(
                f"unknown phase {name!r} in workflow {self.workflow.name!r} "
                f"(phases: {', '.join(self.workflow.phase_names)})"
            ) from None

    def _single_phase(self, state: ItemState, name: str) -> RunOutcome:
        phase = self._known_phase(name)
        cursor = state.engine.cursor
        if cursor is not None and cursor.phase == name:
            self._resume_partial(state)
        else:
            self._enter(state, phase, check_warnings=True)
        if phase.kind == "finish":
            return self._finish(state, phase)
        self.loop.run(state, phase)
        return RunOutcome("phase-done", state, f"phase {name} complete")

    def _finish(self, state: ItemState, phase: Phase | None) -> RunOutcome:
        """Mark the item complete, keep the summary, delete the review history (TD5)."""
        now = utc_now()
        if phase is not None:
            record = state.phase(phase.name)
            record.started = record.started or now
            record.completed = now
            state.current_phase = phase.name
        state.status = "completed"
        state.completed = now
        state.engine.cursor = None
        state.summary = completion_summary(state)
        self.item.save(state)
        remove_file(self.item.history_path)
        self.item.record("item.completed", summary=state.summary, sync_now=True)
        if not state.worktree:
            return RunOutcome("completed", state, state.summary)
        confirm = self.asker.confirm if self.asker.interactive else None
        message, removed = finish_worktree(
            self.item.repo, self.item.name, state.worktree, state.branch, confirm
        )
        self.item.record("worktree.finish", branch=state.branch, removed=removed, message=message)
        return RunOutcome("completed", state, f"{state.summary} {message}")


def completion_summary(state: ItemState) -> str:
    """One line that stays in the state file after the history is deleted."""
    run = [n for n, r in state.phases.items() if r.completed and r.review is not None]
    total = sum(state.phases[n].iterations for n in run)
    concerns = [n for n in run if state.phases[n].review == "concerns"]
    text = f"{len(run)} phases completed in {total} review iterations"
    if concerns:
        text += f"; unresolved reviewer concerns in {', '.join(concerns)}"
    return text + "."
