"""The executor-reviewer loop of one phase (seed 000 section 5, seed 001).

The loop advances one stage per state commit, so a resumed run picks it up
exactly where it stopped::

    execute -> checks -> review -> (approved)           -> phase complete
                                -> (not approved, i < max) -> execute (i + 1, with feedback)
                                -> (not approved, i = max) -> complete with reviewerNotes

A failing check counts as a not-approved iteration whose blockers go back to
the executor; the reviewer is not asked until the checks pass.
"""

from __future__ import annotations

import dataclasses
import time

from phasegate.agents.base import Access, AgentResult
from phasegate.agents.verdict import (
    VERDICT_SCHEMA,
    ReviewIssue,
    ReviewVerdict,
    Severity,
    VerdictReading,
    read_verdict,
)
from phasegate.engine.checks import CheckOutcome, run_checks
from phasegate.engine.dispatch import Backends, CallSpec, dispatch
from phasegate.engine.prompting import (
    executor_prompt,
    implementation_changes,
    read_artifact,
    reviewer_prompt,
)
from phasegate.engine.workitem import WorkItem
from phasegate.state.item import Cursor, IssueRecord, ItemState, IterationRecord
from phasegate.state.journal import utc_now
from phasegate.workflow.model import Phase, Workflow

CHANGES_LIMIT = 1500


class ReviewLoop:
    """Runs the stages of one phase for one work item."""

    def __init__(self, item: WorkItem, backends: Backends) -> None:
        self.item = item
        self.backends = backends

    @property
    def workflow(self) -> Workflow:
        return self.item.workflow

    def start(self, state: ItemState, phase: Phase, *, no_review: bool) -> None:
        """Mark ``phase`` started and put the cursor at its first iteration."""
        record = state.phase(phase.name)
        record.started = utc_now()
        record.completed = None
        record.iterations = 0
        record.reviewer_notes = []
        record.verified = None
        record.review = None
        record.summary = None
        state.current_phase = phase.name
        state.engine.epoch += 1
        state.engine.cursor = Cursor(
            phase=phase.name, epoch=state.engine.epoch, no_review=no_review
        )
        self.item.record(
            "phase.started",
            phase=phase.name,
            mode=state.mode,
            max_iterations=self.workflow.max_iterations(state.mode),
            no_review=no_review,
        )
        self.item.save(state, lazy=True)

    def run(self, state: ItemState, phase: Phase) -> None:
        """Advance the cursor until ``phase`` is complete."""
        while state.engine.cursor is not None and state.engine.cursor.phase == phase.name:
            cursor = state.engine.cursor
            if cursor.stage == "execute":
                self._execute(state, phase, cursor)
            elif cursor.stage == "checks":
                self._checks(state, phase, cursor)
            else:
                self._review(state, phase, cursor)

    # -- stages ---------------------------------------------------------------

    def _execute(self, state: ItemState, phase: Phase, cursor: Cursor) -> None:
        assert phase.executor is not None
        role = self.workflow.roles[phase.executor]
        spec = CallSpec(
            role=phase.executor,
            phase=phase.name,
            epoch=cursor.epoch,
            iteration=cursor.iteration,
            stage="execute",
            access=Access(role.access),
            output_schema=None,
            build_prompt=lambda: executor_prompt(self.item, state, phase, cursor),
        )
        result = dispatch(self.item, state, self.backends, spec)
        cursor.changes = _summary_of(result)
        self._add_usage(state, phase, result)
        if phase.checks:
            cursor.stage = "checks"
            self.item.save(state, lazy=True)
        else:
            self._after_checks(state, phase, cursor)

    def _checks(self, state: ItemState, phase: Phase, cursor: Cursor) -> None:
        outcomes = self._check_round(state, phase, cursor)
        failures = [outcome for outcome in outcomes if not outcome.passed]
        if failures:
            issues = tuple(
                ReviewIssue(
                    severity=Severity.BLOCKER,
                    description=f"{f.describe()}:\n{f.output_tail.strip()}".rstrip(":\n"),
                    location=f.command,
                )
                for f in failures
            )
            summary = "; ".join(f.describe() for f in failures)
            reading = VerdictReading(
                verdict=ReviewVerdict(approved=False, issues=issues, summary=summary),
                source="checks",
            )
            self._conclude(state, phase, cursor, reading)
            return
        self._after_checks(state, phase, cursor)

    def _check_round(self, state: ItemState, phase: Phase, cursor: Cursor) -> list[CheckOutcome]:
        """Run the phase's checks, or reuse the outcomes a run recorded before it died."""
        recorded = self.item.recorded().checks(phase.name, cursor.epoch, cursor.iteration)
        if recorded is not None:
            return [CheckOutcome(**outcome) for outcome in recorded]
        self.item.before_slow_work()
        started = time.monotonic()
        outcomes = run_checks(phase, self.item.config, self.item.workdir(state), self.item.redactor)
        self.item.slow_work_done(time.monotonic() - started)
        for outcome in outcomes:
            self.item.record(
                "check.finished",
                phase=phase.name,
                iteration=cursor.iteration,
                check=outcome.name,
                command=outcome.command,
                passed=outcome.passed,
                skipped=outcome.skipped,
                exit_code=outcome.exit_code,
                duration_s=outcome.duration_s,
                output=outcome.output_tail,
            )
        self.item.record(
            "checks.completed",
            phase=phase.name,
            epoch=cursor.epoch,
            iteration=cursor.iteration,
            outcomes=[dataclasses.asdict(outcome) for outcome in outcomes],
        )
        return outcomes

    def _after_checks(self, state: ItemState, phase: Phase, cursor: Cursor) -> None:
        """Checks passed (or there are none): on to the reviewer, or done without one."""
        if phase.reviewer and not cursor.no_review:
            cursor.stage = "review"
            self.item.save(state, lazy=True)
        else:
            self._complete(state, phase, cursor, "skipped" if phase.reviewer else "none", [], "")

    def _review(self, state: ItemState, phase: Phase, cursor: Cursor) -> None:
        assert phase.reviewer is not None
        changes = implementation_changes(self.item, state) if phase.reviews_code else None
        reading = self._precheck(phase, changes)
        # Revising this phase cannot produce an earlier phase's artifact: stop now.
        unfixable = reading is not None and self._previous_missing(phase)
        if reading is None:
            spec = CallSpec(
                role=phase.reviewer,
                phase=phase.name,
                epoch=cursor.epoch,
                iteration=cursor.iteration,
                stage="review",
                access=Access.READ_ONLY,
                output_schema=VERDICT_SCHEMA,
                build_prompt=lambda: reviewer_prompt(self.item, state, phase, cursor, changes),
            )
            result = dispatch(self.item, state, self.backends, spec)
            self._add_usage(state, phase, result)
            reading = read_verdict(result)
        self._conclude(state, phase, cursor, reading, final=unfixable)

    def _previous_missing(self, phase: Phase) -> bool:
        return bool(
            phase.previous
            and phase.previous_required
            and not (read_artifact(self.item, phase.previous) or "").strip()
        )

    def _precheck(self, phase: Phase, changes: str | None) -> VerdictReading | None:
        """Interface 2's error cases, decided in code without asking a reviewer."""
        problems: list[str] = []
        if self._previous_missing(phase):
            producers = [p.name for p in self.workflow.phases if p.artifact == phase.previous]
            hint = f" (run the {producers[0]} phase first)" if producers else ""
            problems.append(f"The previous artifact {phase.previous} is missing or empty{hint}.")
        if phase.artifact and not (read_artifact(self.item, phase.artifact) or "").strip():
            problems.append(f"The artifact {phase.artifact} is missing or empty.")
        if phase.reviews_code and not phase.artifact and not (changes or "").strip():
            problems.append("No implementation changes were found in the work tree.")
        if not problems:
            return None
        issues = tuple(ReviewIssue(severity=Severity.BLOCKER, description=p) for p in problems)
        return VerdictReading(
            verdict=ReviewVerdict(approved=False, issues=issues, summary=" ".join(problems)),
            source="engine",
        )

    # -- outcomes -------------------------------------------------------------

    def _conclude(
        self,
        state: ItemState,
        phase: Phase,
        cursor: Cursor,
        reading: VerdictReading,
        *,
        final: bool = False,
    ) -> None:
        """Record the iteration; then approve, loop with feedback, or stop at the limit."""
        issues = [
            IssueRecord(severity=i.severity.value, description=i.description, location=i.location)
            for i in reading.verdict.issues
        ]
        state.engine.iterations.append(
            IterationRecord(
                phase=phase.name,
                iteration=cursor.iteration,
                timestamp=utc_now(),
                approved=reading.approved,
                unclear=reading.unclear,
                source=reading.source,
                summary=reading.verdict.summary,
                issues=issues,
                changes=cursor.changes,
            )
        )
        state.phase(phase.name).iterations = cursor.iteration
        self.item.record(
            "review.verdict",
            phase=phase.name,
            iteration=cursor.iteration,
            approved=reading.approved,
            unclear=reading.unclear,
            source=reading.source,
            summary=reading.verdict.summary,
            issues=[i.model_dump(mode="json") for i in issues],
        )
        limit = self.workflow.max_iterations(state.mode)
        if reading.approved:
            self._complete(state, phase, cursor, "approved", [], reading.verdict.summary)
        elif cursor.iteration < limit and not final:
            cursor.iteration += 1
            cursor.stage = "execute"
            cursor.feedback = issues
            cursor.changes = ""
            self.item.save(state, lazy=True)
        else:
            notes = [_note(i) for i in issues if i.severity != "note"] or [_note(i) for i in issues]
            self._complete(state, phase, cursor, "concerns", notes, reading.verdict.summary)

    def _complete(
        self,
        state: ItemState,
        phase: Phase,
        cursor: Cursor,
        review: str,
        notes: list[str],
        summary: str,
    ) -> None:
        record = state.phase(phase.name)
        record.completed = utc_now()
        record.iterations = cursor.iteration
        record.reviewer_notes = notes
        record.verified = (
            True if review == "approved" else (False if review == "concerns" else None)
        )
        record.review = review  # type: ignore[assignment]
        record.summary = summary or None
        state.current_phase = phase.name
        state.engine.cursor = None
        self.item.record(
            "phase.completed",
            phase=phase.name,
            iterations=record.iterations,
            review=review,
            reviewer_notes=notes,
        )
        self.item.save(state, lazy=True)

    def _add_usage(self, state: ItemState, phase: Phase, result: AgentResult) -> None:
        for usage in (state.phase(phase.name).usage, state.usage):
            usage.add(
                result.usage.input_tokens,
                result.usage.output_tokens,
                result.cost_usd,
                result.usage.cache_read_tokens,
                result.usage.cache_write_tokens,
            )


def _summary_of(result: AgentResult) -> str:
    text = result.text.strip()
    if len(text) > CHANGES_LIMIT:
        text = text[:CHANGES_LIMIT] + " [...]"
    return text


def _note(issue: IssueRecord) -> str:
    where = f" (at {issue.location})" if issue.location else ""
    return f"[{issue.severity}] {issue.description}{where}"
