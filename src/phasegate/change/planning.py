"""``phasegate plan``: proposal -> specs -> tasks -> challenge loop (WF-R2, WF-R3).

The phase alone decides what ``plan`` does (WF-R1): no STATE.yaml -> create
the change and plan it; ``proposed`` -> (continue) planning; ``challenged``
-> nothing to do; ``rejected`` -> stop until a person edits the plan and asks
for a re-challenge; later phases -> beyond planning. Inside ``proposed`` the
recorded step says where a killed run stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from phasegate.change.authoring import PlanAuthor
from phasegate.change.calls import AgentCalls
from phasegate.change.challenge import (
    CHALLENGE_SCHEMA,
    ChallengeReading,
    append_block,
    read_challenge,
    render_block,
)
from phasegate.change.handle import Change
from phasegate.change.phases import INITIAL, ChangePhase, next_command, not_ready
from phasegate.change.prompts import (
    challenge_prompt,
)
from phasegate.change.specfiles import snapshot_bases
from phasegate.change.state import ChangeState, PlanProgress, TransitionRecord
from phasegate.engine.dispatch import Backends
from phasegate.engine.runner import Asker, NoTerminal
from phasegate.engine.workitem import head_commit
from phasegate.errors import BadInputError, BlockedError
from phasegate.state.journal import utc_now

LimitChoice = Literal["implement", "continue"]
LIMIT_CHOICES: tuple[LimitChoice, ...] = ("implement", "continue")
PlanAction = Literal["challenged", "rejected", "waiting", "already-planned", "beyond-planning"]


@dataclass(frozen=True)
class PlanOptions:
    """Flags of ``phasegate plan``."""

    description: str | None = None
    mode: str | None = None
    rechallenge: bool = False
    on_limit: LimitChoice | None = None
    #: Shows a person the plan and the last challenge (the seed's "View").
    viewer: Callable[[str], None] | None = None


@dataclass(frozen=True)
class PlanOutcome:
    """How ``plan`` ended (the seed's ``WorkflowAction``)."""

    action: PlanAction
    state: ChangeState
    message: str


def plan_change(
    change: Change,
    backends: Backends,
    asker: Asker | None = None,
    options: PlanOptions | None = None,
) -> PlanOutcome:
    """Run (or resume) ``plan`` for ``change``."""
    return _Planner(change, backends, asker or NoTerminal(), options or PlanOptions()).run()


class _Planner:
    def __init__(
        self, change: Change, backends: Backends, asker: Asker, options: PlanOptions
    ) -> None:
        self.change = change
        self.calls = AgentCalls(change, backends)
        self.author = PlanAuthor(change, self.calls)
        self.asker = asker
        self.options = options

    def run(self) -> PlanOutcome:
        with self.change.item.run_lock():
            self.change.remove_stale_temp_files()
            if not self.change.exists():
                archived = self.change.load_archived()
                state = self._create() if archived is None else archived
            else:
                state = self.change.load()
            outcome = self._by_phase(state)
            if outcome is not None:
                return outcome
            return self._loop(state)

    def _create(self) -> ChangeState:
        description = (self.options.description or "").strip()
        if not description:
            raise BadInputError(
                f"change {self.change.id!r} does not exist yet: give a description "
                f'(phasegate plan {self.change.id} "what the change is about")'
            )
        workflow = self.change.loaded.workflow
        mode = self.options.mode or workflow.default_mode
        if mode not in workflow.modes:
            raise BadInputError(f"unknown mode {mode!r} (modes: {', '.join(workflow.modes)})")
        limit = workflow.max_iterations(mode)
        now = utc_now()
        state = ChangeState(
            change_id=self.change.id,
            phase=INITIAL,
            description=description,
            mode=mode,
            planning_iterations=limit,
            implementation_iterations=limit,
            created=now,
            updated=now,
            base_commit=head_commit(self.change.repo),
            plan=PlanProgress(),
            history=[TransitionRecord(at=now, **{"from": None}, to=INITIAL, cause="plan (init)")],
        )
        self.change.record("change.created", description=description, mode=mode)
        self.change.save(state)
        return state

    def _by_phase(self, state: ChangeState) -> PlanOutcome | None:
        """WF-R1: what ``plan`` does is decided by the phase alone."""
        phase, cid = state.phase, self.change.id
        if self.options.rechallenge and phase not in (ChangePhase.PROPOSED, ChangePhase.REJECTED):
            raise not_ready(cid, phase, "plan --rechallenge", "proposed or rejected changes")
        if phase is ChangePhase.CHALLENGED:
            return PlanOutcome(
                "already-planned",
                state,
                f"Planning of {cid} is complete. Next: phasegate impl {cid}",
            )
        if phase is ChangePhase.REJECTED and not self.options.rechallenge:
            return PlanOutcome("rejected", state, self._rejected_message(state))
        if phase in (ChangePhase.IMPLEMENTING, ChangePhase.COMPLETE, ChangePhase.ARCHIVED):
            return PlanOutcome(
                "beyond-planning",
                state,
                f"{cid} is beyond planning (phase {phase.value}). Next: {next_command(phase, cid)}",
            )
        if self.options.rechallenge:
            self._start_rechallenge(state)
        elif state.plan is None or state.plan.step == "done":
            # Proposed but not mid-plan (e.g. a hand-written STATE.yaml): the seed's
            # "proposed -> challenge".
            state.plan = PlanProgress(step="challenge")
            self.change.save(state)
        return None

    def _rejected_message(self, state: ChangeState) -> str:
        summary = state.plan.summary if state.plan else ""
        return (
            f"{self.change.id} was REJECTED by the challenger"
            + (f": {summary}" if summary else "")
            + f". Next: {next_command(ChangePhase.REJECTED, self.change.id)}"
        )

    def _start_rechallenge(self, state: ChangeState) -> None:
        for path in (self.change.proposal_path, self.change.tasks_path):
            if not path.is_file():
                raise BadInputError(
                    f"cannot re-challenge {self.change.id}: {self.change.rel(path)} is missing"
                )
        if state.phase is ChangePhase.REJECTED:
            self.change.move(state, ChangePhase.PROPOSED, "re-challenge requested")
        done = state.plan.specs_done if state.plan else []
        state.epoch += 1
        state.plan = PlanProgress(step="challenge", iteration=1, specs_done=done)
        self.author.ensure_tasks_frontmatter()
        snapshot_bases(self.change, state)
        self.change.record("plan.rechallenge", epoch=state.epoch)
        self.change.save(state)

    # -- the planning loop ---------------------------------------------------------

    def _loop(self, state: ChangeState) -> PlanOutcome:
        while True:
            assert state.plan is not None
            step = state.plan.step
            if step == "proposal":
                self.author.proposal(state)
            elif step == "specs":
                self.author.specs(state)
            elif step == "tasks":
                self.author.tasks(state)
            elif step == "reproposal":
                self.author.reproposal(state)
            elif step == "decide":
                outcome = self._decide(state)
                if outcome is not None:
                    return outcome
            else:
                outcome = self._challenge(state)
                if outcome is not None:
                    return outcome

    # -- the challenge and its verdict --------------------------------------------

    def _challenge(self, state: ChangeState) -> PlanOutcome | None:
        assert state.plan is not None
        plan, limit = state.plan, state.planning_iterations
        result = self.calls.call(
            state,
            role="challenger",
            step="challenge",
            iteration=plan.iteration,
            stage="review",
            build=lambda: challenge_prompt(self.change, state, limit, CHALLENGE_SCHEMA),
            output_schema=CHALLENGE_SCHEMA,
        )
        reading = read_challenge(result)
        self._append_review_block(state, reading)
        plan.verdict = reading.verdict
        plan.summary = reading.summary
        plan.issues = list(reading.issues)
        self.change.record(
            "challenge.verdict",
            iteration=plan.iteration,
            verdict=reading.verdict,
            source=reading.source,
            summary=reading.summary,
            issues=[i.model_dump() for i in reading.issues],
        )
        if reading.verdict == "APPROVED":
            return self._accept(state, f"challenge {plan.iteration} APPROVED")
        if reading.verdict == "REJECTED":
            self.change.move(state, ChangePhase.REJECTED, f"challenge {plan.iteration}")
            plan.step = "done"
            self.change.save(state)
            return PlanOutcome("rejected", state, self._rejected_message(state))
        self.change.move(state, ChangePhase.PROPOSED, f"challenge {plan.iteration} NEEDS_REVISION")
        if plan.iteration < limit:
            plan.iteration += 1
            self.author.advance(state, "reproposal")
            return None
        self.author.advance(state, "decide")
        return None

    def _append_review_block(self, state: ChangeState, reading: ChallengeReading) -> None:
        assert state.plan is not None
        round_id = f"{state.epoch}.{state.plan.iteration}"
        by = f"challenger ({self.calls.backends.describe('challenger')})"
        block = render_block(round_id, state.plan.iteration, reading, by, utc_now())
        append_block(self.change.proposal_path, round_id, self.change.item.redactor.text(block))

    def _accept(self, state: ChangeState, detail: str) -> PlanOutcome:
        assert state.plan is not None
        self.change.move(state, ChangePhase.CHALLENGED, detail)
        state.plan.step = "done"
        state.plan.question = None
        self.change.save(state)
        return PlanOutcome(
            "challenged",
            state,
            f"{self.change.id} is challenged ({detail}). Next: phasegate impl {self.change.id}",
        )

    # -- the iteration limit: ask the user --------------------------------------------

    def _decide(self, state: ChangeState) -> PlanOutcome | None:
        assert state.plan is not None
        plan = state.plan
        minor = not any(i.severity == "high" for i in plan.issues)
        choices = ["implement", "view", "continue"] if minor else ["view", "continue"]
        kind = "only minor issues" if minor else "high-severity issues"
        question = (
            f"{self.change.id}: {plan.iteration} challenge round(s) used (limit "
            f"{state.planning_iterations}) and the plan still NEEDS_REVISION with {kind}. "
            + (
                "Implement it as it is, view the review, or continue revising?"
                if minor
                else "View the review, or continue revising?"
            )
        )
        answer, by = self._answer(question, choices, minor)
        if answer is None:
            plan.question = question
            self.change.record(
                "decision.needed", id="planning-limit", question=question, sync_now=True
            )
            self.change.save(state)
            flags = (
                "--on-limit implement or --on-limit continue" if minor else "--on-limit continue"
            )
            return PlanOutcome(
                "waiting",
                state,
                f"{question} Answer with: phasegate plan {self.change.id} {flags} "
                f"(or edit the plan and run phasegate plan {self.change.id} --rechallenge)",
            )
        self.change.record(
            "decision", id="planning-limit", question=question, answer=answer, by=by, sync_now=True
        )
        if answer == "implement":
            return self._accept(
                state, "iteration limit reached with minor issues; implement chosen"
            )
        extra = self.change.loaded.workflow.max_iterations(state.mode)
        state.planning_iterations += extra
        plan.iteration += 1
        plan.question = None
        self.author.advance(state, "reproposal")
        return None

    def _answer(self, question: str, choices: list[str], minor: bool) -> tuple[str | None, str]:
        if self.options.on_limit is not None:
            if self.options.on_limit == "implement" and not minor:
                raise BlockedError(
                    f"cannot implement {self.change.id} as it is: the last challenge lists "
                    "high-severity issues; use --on-limit continue, or edit the plan and "
                    f"run phasegate plan {self.change.id} --rechallenge"
                )
            return self.options.on_limit, "flag"
        if not self.asker.interactive:
            return None, "none"
        while True:
            answer = self.asker.choose(question, choices, choices[0])
            if answer != "view":
                return answer, "prompt"
            if self.options.viewer is not None:
                self.options.viewer(self._view_text())
            choices = [c for c in choices if c != "view"]

    def _view_text(self) -> str:
        files = [self.change.proposal_path, self.change.tasks_path] + [
            self.change.specs_dir / n for n in self.change.spec_files()
        ]
        text = self.change.proposal_path.read_text(encoding="utf-8", errors="replace")
        start = text.rfind("<!-- phasegate:challenge ")
        review = text[start:] if start >= 0 else "(no review block found)"
        return (
            "Plan files:\n" + "\n".join(f"  {self.change.rel(p)}" for p in files) + "\n\n" + review
        )
