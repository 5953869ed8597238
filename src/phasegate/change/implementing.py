"""``phasegate impl``: tasks.md layer by layer -> structured review -> fix loop (WF-R4, WF-R5).

Only ``challenged`` and ``implementing`` changes are implemented (WF-R1);
any other phase is ``ChangeNotReady``. The reviewer's verdict is read from
REVIEW.md as the ``create_review`` tool wrote it during the reviewer's call,
never from the reviewer's text: a reviewer that does not call the tool has
not approved anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from phasegate.change.calls import AgentCalls
from phasegate.change.handle import Change
from phasegate.change.phases import ChangePhase, not_ready
from phasegate.change.prompts import fix_prompt, implement_prompt, review_prompt
from phasegate.change.review import RecordedReview, ReviewVerdict, read_review
from phasegate.change.state import ChangeState, ImplProgress, ImplStep
from phasegate.change.tasks import TaskList, read_tasks
from phasegate.engine.dispatch import Backends
from phasegate.errors import AgentError, BlockedError
from phasegate.state.atomic import atomic_write_bytes, remove_file

ImplStatus = Literal["complete", "stopped"]


@dataclass(frozen=True)
class ImplOptions:
    """Flags of ``phasegate impl``."""

    #: After a manual fix: skip implementing and go straight to a new review.
    review_only: bool = False


@dataclass(frozen=True)
class ImplOutcome:
    """How ``impl`` ended: complete, or stopped for a person (findings in ``review``)."""

    status: ImplStatus
    state: ChangeState
    message: str
    review: RecordedReview | None


def implement_change(
    change: Change, backends: Backends, options: ImplOptions | None = None
) -> ImplOutcome:
    """Run (or resume) ``impl`` for ``change``."""
    return _Implementer(change, backends, options or ImplOptions()).run()


class _Implementer:
    def __init__(self, change: Change, backends: Backends, options: ImplOptions) -> None:
        self.change = change
        self.calls = AgentCalls(change, backends)
        self.options = options

    def run(self) -> ImplOutcome:
        with self.change.item.run_lock():
            self.change.remove_stale_temp_files()
            state = self._load()
            tasks = read_tasks(self.change.tasks_path)
            if tasks.task_count == 0:
                raise BlockedError(
                    f"{self.change.rel(self.change.tasks_path)} lists no tasks; add them "
                    "(under headings such as '## 1. Data Layer') and run impl again"
                )
            self.change.record(
                "tasks.read",
                change_id=tasks.change_id,
                change_id_from=tasks.change_id_from,
                order=tasks.order,
                layers={layer.key: len(layer.tasks) for layer in tasks.layers},
            )
            self._start(state)
            return self._loop(state, tasks)

    def _load(self) -> ChangeState:
        if not self.change.exists():
            if self.change.archived_path() is not None:
                raise not_ready(
                    self.change.id, ChangePhase.ARCHIVED, "impl", "challenged or implementing"
                )
            raise not_ready_missing(self.change)
        state = self.change.load()
        if state.phase not in (ChangePhase.CHALLENGED, ChangePhase.IMPLEMENTING):
            raise not_ready(
                self.change.id, state.phase, "impl", "challenged or implementing changes"
            )
        return state

    def _start(self, state: ChangeState) -> None:
        """Enter implementing, or start a new round after a stop; a killed run just continues."""
        first: ImplStep = "review" if self.options.review_only else "implement"
        impl = state.impl
        if state.phase is ChangePhase.CHALLENGED:
            self.change.move(state, ChangePhase.IMPLEMENTING, "impl")
        elif (
            impl is not None
            and impl.step not in ("stopped", "done")
            and not (self.options.review_only and impl.step != "review")
        ):
            return  # a killed run: continue at the recorded step
        state.epoch += 1
        findings = list(impl.findings) if impl is not None else []
        state.impl = ImplProgress(step=first, iteration=1, findings=findings)
        self.change.record("impl.started", step=first, epoch=state.epoch)
        if first == "review":
            self._set_aside_review(state)
        self.change.save(state)

    def _loop(self, state: ChangeState, tasks: TaskList) -> ImplOutcome:
        while True:
            assert state.impl is not None
            step = state.impl.step
            if step == "implement":
                self._implement(state, tasks)
            elif step == "fix":
                self._fix(state)
            elif step == "review":
                outcome = self._review(state)
                if outcome is not None:
                    return outcome
            else:  # "stopped"/"done" are handled by _start; a hand-edited state lands here
                raise AssertionError(f"impl cannot continue from step {step!r}")

    def _to_review(self, state: ChangeState) -> None:
        assert state.impl is not None
        self._set_aside_review(state)
        state.impl.step = "review"
        self.change.record("impl.step", step="review", iteration=state.impl.iteration)
        self.change.save(state)

    def _set_aside_review(self, state: ChangeState) -> None:
        """Keep the last REVIEW.md under reviews/ and remove it before a new review round.

        Only the reviewer runs between this and reading REVIEW.md back, so a
        REVIEW.md found then was written during its call (by the tool: the
        reviewer itself is read-only), never left by the implementer.
        """
        path = self.change.review_path
        if not path.exists():
            return
        kept = self.change.reviews_dir / f"REVIEW.{state.epoch}.{_iteration(state)}.md"
        atomic_write_bytes(kept, path.read_bytes())
        remove_file(path)

    def _implement(self, state: ChangeState, tasks: TaskList) -> None:
        assert state.impl is not None
        impl, limit = state.impl, state.implementation_iterations
        for layer in tasks.layers:
            if layer.key in impl.layers_done:
                continue
            if not layer.open_tasks:
                self.change.record("layer.skipped", layer=layer.key, reason="all tasks done")
            else:
                done = list(impl.layers_done)
                self.calls.call(
                    state,
                    role="implementer",
                    step=f"implement:{layer.key}",
                    iteration=impl.iteration,
                    stage="execute",
                    build=lambda layer=layer, done=done: implement_prompt(  # type: ignore[misc]
                        self.change, state, layer, done, limit
                    ),
                )
                self.change.record("layer.done", layer=layer.key, tasks=len(layer.open_tasks))
            impl.layers_done.append(layer.key)
            self.change.save(state)
        self._to_review(state)

    def _fix(self, state: ChangeState) -> None:
        assert state.impl is not None
        limit = state.implementation_iterations
        self.calls.call(
            state,
            role="implementer",
            step="fix",
            iteration=state.impl.iteration,
            stage="execute",
            build=lambda: fix_prompt(self.change, state, limit),
        )
        self._to_review(state)

    def _review(self, state: ChangeState) -> ImplOutcome | None:
        review = self._reviewed(state)
        assert state.impl is not None
        impl = state.impl
        impl.verdict = review.verdict
        impl.summary = review.summary
        impl.findings = list(review.findings)
        self.change.record(
            "review.verdict",
            iteration=impl.iteration,
            round=review.round,
            verdict=review.verdict.value,
            findings=[f.model_dump(mode="json") for f in review.findings],
        )
        rel = self.change.rel(self.change.review_path)
        if review.verdict is ReviewVerdict.APPROVED:
            self.change.move(state, ChangePhase.COMPLETE, f"review {impl.iteration} APPROVED")
            impl.step = "done"
            self.change.save(state)
            message = f"{self.change.id} is complete. Next: phasegate archive {self.change.id}"
            return ImplOutcome("complete", state, message, review)
        if review.verdict is ReviewVerdict.NEEDS_FIX and impl.iteration < (
            state.implementation_iterations
        ):
            self.change.move(state, ChangePhase.IMPLEMENTING, f"review {impl.iteration} NEEDS_FIX")
            impl.iteration += 1
            impl.step = "fix"
            impl.layers_done = []
            self.change.save(state)
            return None
        if review.verdict is ReviewVerdict.NEEDS_FIX:
            reason = (
                f"the review still says NEEDS_FIX after {impl.iteration} round(s) "
                f"(implementation_iterations {state.implementation_iterations})"
            )
        else:
            reason = "the reviewer found MAJOR_ISSUES"
        impl.step = "stopped"
        impl.stop_reason = reason
        self.change.record("impl.stopped", reason=reason, sync_now=True)
        self.change.save(state)
        message = (
            f"{self.change.id}: manual fix required: {reason} ({len(review.findings)} finding(s), "
            f"see {rel}). Fix them, then run phasegate impl {self.change.id} --review-only"
        )
        return ImplOutcome("stopped", state, message, review)

    def _reviewed(self, state: ChangeState) -> RecordedReview:
        """Call the reviewer until the tool recorded this round's review (or retries run out)."""
        assert state.impl is not None
        limit = self.calls.backends.config.retries.agent + 1
        hint = ""
        for attempt in range(1, limit + 1):
            round_id = f"{state.epoch}.{state.impl.iteration}"
            result = self.calls.call(
                state,
                role="reviewer",
                step="review",
                iteration=state.impl.iteration,
                stage="review",
                build=lambda round_id=round_id: review_prompt(  # type: ignore[misc]
                    self.change, state, state.implementation_iterations, round_id
                ),
            )
            review = read_review(self.change.review_path)
            if (
                review is not None
                and review.round == round_id
                and review.change_id == (self.change.id)
            ):
                return review
            self.change.record(
                "review.missing",
                round=round_id,
                attempt=attempt,
                of=limit,
                found=review.round if review is not None else None,
                sync_now=True,
            )
            state.epoch += 1  # the next call is a new round, not the journaled one
            self.change.save(state)
            # A CLI that refused the tool call says so on stderr: worth showing.
            denied = [line for line in result.stderr.splitlines() if "denied" in line.lower()]
            hint = f" (its CLI reported: {denied[-1].strip()})" if denied else hint
        raise AgentError(
            f"the reviewer ({self.calls.backends.describe('reviewer')}) of {self.change.id} "
            f"finished {limit} time{'s' if limit > 1 else ''} without calling the create_review "
            f"tool{hint}, so no review was recorded and the change is not approved; check that its "
            "backend is given phasegate's MCP server, then run phasegate impl "
            f"{self.change.id} again"
        )


def _iteration(state: ChangeState) -> int:
    return state.impl.iteration if state.impl is not None else 0


def not_ready_missing(change: Change) -> BlockedError:
    """``impl`` of a change that was never planned."""
    return BlockedError(
        f"change {change.id!r} does not exist in {change.rel(change.changes_root)}; "
        f'plan it first: phasegate plan {change.id} "what the change is about"'
    )
