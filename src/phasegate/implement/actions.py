"""The implement workflow's actions and predicates: context loading, review tracking,
ticking PLAN.md, escalation.

Every action can run again after a crash without doing anything twice: a
tick or a note already in PLAN.md is left as it is, and the review-cycle
record is keyed by visit and cycle.
"""

from __future__ import annotations

import sys
from typing import Any

from phasegate.engine.plugin_api import Action, PluginContext, Predicate
from phasegate.faults import crash_point
from phasegate.implement import cycles
from phasegate.implement.checkboxes import TICK_WAITING, is_ticked, tick_task
from phasegate.implement.context import load_documents
from phasegate.implement.parallel import guard_plan, restore_plan
from phasegate.implement.settings import ACTIONS
from phasegate.implement.snapshots import snapshot
from phasegate.implement.where import (
    ADDED,
    PHASE_ALIASES,
    PHASES,
    REOPENED,
    TASKS,
    UNTICKED,
    agent_node,
    implementer_of,
    load_plan,
    plan_path,
    plan_rel,
    refuse_unknown_agents,
    refuse_unreviewable,
    roster,
    settings_of,
    spec_dir_rel,
    task_prefix,
)
from phasegate.workflow.routing import BLOCKED, FAILED, REVIEW_FAILED


class LoadContext(Action):
    """Seed 004's Phase 0: PLAN.md (required) and BRD/PRD/SDD read once; agents checked."""

    name = "implement-load-context"
    #: ``added``: with ``added: true``, once every phase has ended, tasks were added to
    #: PLAN.md during the run (see :func:`added_during_run`).
    outcomes = ("done", "added")

    def run(self, ctx: PluginContext) -> str:
        if ctx.settings.get("added"):
            return added_during_run(ctx)
        plan = load_plan(ctx)
        where = plan_rel(ctx.state)
        found = roster(ctx)
        refuse_unknown_agents(plan, found, where)
        refuse_unreviewable(plan, found, where, settings_of(ctx).default_agent)
        docs = load_documents(ctx.workdir / spec_dir_rel(ctx.state))
        ctx.state.node(ctx.path)["documents"] = docs
        reopened = ctx.state.data.pop(REOPENED, None)
        added = ctx.state.data.pop(ADDED, None)
        unticked = ctx.state.data.pop(UNTICKED, None)
        again = (
            [f"{where} has open tasks again after the item completed: {', '.join(reopened)}"]
            if reopened
            else []
        )
        if added:
            again.append(
                f"{where}: {len(added)} task(s) added while the run went on, done now: "
                + ", ".join(added)
            )
        if unticked:
            again.append(
                f"{where}: {len(unticked)} task(s) unticked after the run did them, done "
                "again now: " + ", ".join(unticked)
            )
        ctx.record(
            "implement.context",
            plan=where,
            phases=len(plan.phases),
            tasks=len([t for t in plan.tasks() if not t.checkpoint]),
            open=len([t for t in plan.tasks() if not t.done and not t.checkpoint]),
            documents={name: len(text) for name, text in docs.items()},
            agents=found.names(),
            notes=[*again, *plan.notes(where), *found.problems],
        )
        return "done"


def added_during_run(ctx: PluginContext) -> str:
    """Every phase has ended: the open tasks PLAN.md has now that none of the run's loops
    knew (added to it while the run went on) send the run back to read the plan, which
    does them (the ticked ones skipped); ``done`` when there are none."""
    from phasegate.engine.nodes.foreach import safe_key

    known: set[str] = set()
    phases = ctx.state.peek(PHASES)
    for phase in (phases.get("order") or []) if phases is not None else []:
        tasks = ctx.state.peek(f"{PHASES}[{phase}]/{TASKS}")
        known.update((tasks.get("items") or {}) if tasks is not None else {})
    open_tasks = [t for t in load_plan(ctx).tasks() if not t.done and not t.checkpoint]
    added = [t.title for t in open_tasks if safe_key(t.key) not in known]
    # A task the run finished that a person unticked since: done again, as when an item
    # completed has open tasks again.
    unticked = [t.title for t in open_tasks if safe_key(t.key) in known]
    if not added and not unticked:
        return "done"
    if added:
        ctx.state.data[ADDED] = added
    if unticked:
        ctx.state.data[UNTICKED] = unticked
    return "added"


class SnapshotTask(Action):
    """When a task starts: the work tree as it is, to tell later what the task changed."""

    name = "implement-snapshot"

    def run(self, ctx: PluginContext) -> str:
        assert ctx.task is not None
        entry = cycles.task_entry(ctx.state, ctx.task.key, ctx.task.title)
        if not entry.get("_base_tree"):
            entry["_base_tree"] = snapshot(ctx.workdir)
        return "done"


class TrackReview(Action):
    """After each verdict: the reviewer's entry, failure rates, recurring patterns."""

    name = "implement-track-review"

    def run(self, ctx: PluginContext) -> str:
        verdict, node = ctx.verdict, ctx.state.peek(ctx.path)
        if verdict is None or ctx.task is None or node is None:
            return "done"
        entry = cycles.task_entry(ctx.state, ctx.task.key, ctx.task.title)
        # The issues are the feedback; an answer without any is its summary.
        issues = [i.description.strip() for i in verdict.issues if i.description.strip()]
        feedback = "\n".join(dict.fromkeys(issues)) or verdict.summary.strip()
        word = verdict.word if verdict.word in ("APPROVED", "NEEDS_REVISION") else "UNCLEAR"
        suggestion = cycles.reviewer_answered(
            ctx.state, entry, node.visit, node.iteration, word, feedback
        )
        tracking = entry["pattern_tracking"]
        if suggestion is not None:
            ctx.record(
                "implement.pattern",
                task=ctx.task.key,
                same_issue_count=tracking["same_issue_count"],
                recurring_patterns=list(tracking["recurring_patterns"]),
                suggested=suggestion.agent,
                reason=suggestion.reason,
                # An agent the repository does not have is never switched to.
                known=suggestion.agent in roster(ctx).agents,
            )
        return "done"


def _why(ctx: PluginContext) -> str:
    """Why a task is accepted or skipped without an approval, in one line."""
    node = agent_node(ctx)
    outcome = node.get("outcome") if node is not None else None
    records = list(node.get("iterations") or []) if node is not None else []
    last = records[-1] if records else {}
    if outcome == "review-timeout":
        return f"the review timed out ({last.get('summary', '')})".replace(" ()", "")
    if outcome == "unclear":
        return "the review was unclear"
    if outcome in (FAILED, BLOCKED, REVIEW_FAILED) and node is not None:
        said = str((node.get("failure") or {}).get("summary") or f"its agent {outcome}")
        return f"its review failed: {said}" if outcome == REVIEW_FAILED else said
    if records:
        return f"still {last.get('word')} after {len(records)} review cycle(s): {_said(last)}"
    return "no review"


def _said(review: dict[str, Any]) -> str:
    """What a review asked for, in one line: its summary, and its issues where the summary
    does not hold them (a free-text ``NEEDS_REVISION`` has its concern on the next lines,
    and a summary that is only the verdict word says nothing of it)."""
    word = str(review.get("word") or "")
    summary = " ".join(str(review.get("summary") or "").split())
    said = [] if summary.upper().replace(" ", "_") in ("", word) else [summary]
    for issue in review.get("issues") or []:
        found = issue.get("description") if isinstance(issue, dict) else None
        text = " ".join(str(found or "").split())
        if text and text not in summary:
            said.append(text)
    return (" ".join(said) or summary)[:200].rstrip(".")


class TickTask(Action):
    """An approved task: its checkbox ticked in the work tree, nothing else in PLAN.md
    changed (in a parallel task's worktree, PLAN.md is put back as the task found it).

    A parallel task's work is not in the work tree yet: its tick waits, recorded in the
    state, until the phase's merged work is (``with: {landed: true}``, after the phase's
    ``tasks`` loop), so a task whose merge meets a conflict is not ticked before that
    conflict is resolved and its work merged.
    """

    name = "implement-tick"
    how = "approved"

    def note(self, ctx: PluginContext) -> str | None:
        return None

    def run(self, ctx: PluginContext) -> str:
        if ctx.settings.get("landed"):
            tick_landed(ctx)
            return "done"
        if ctx.settings.get("put_back"):
            # Its agent failed or answered BLOCKED (no review, which would have done it):
            # PLAN.md put back as before the call; nothing ticked.
            restore_plan(ctx)
            guard_plan(ctx)
            return "done"
        assert ctx.task is not None
        note = self.note(ctx)
        restore_plan(ctx)  # a parallel task's worktree: the plan is not the task's to change
        guard_plan(ctx)  # the work tree, no review after the executor's call (--no-review)
        entry = cycles.task_entry(ctx.state, ctx.task.key, ctx.task.title)
        cycles.outcome(entry, self.how, note or "")
        if ctx.workspace is not None:
            entry[TICK_WAITING] = {"how": self.how, "note": note}
            ctx.record(
                "implement.tick_waiting", task=ctx.task.key, how=self.how, note=note, sync_now=True
            )
            return "done"
        line = tick_task(plan_path(ctx), ctx.task.key, note)
        ctx.record(
            "implement.ticked", task=ctx.task.key, line=line, how=self.how, note=note, sync_now=True
        )
        return "done"

    def replay(self, ctx: PluginContext, outcome: str) -> None:
        # The outcome was journaled but the state that noted a waiting tick may be lost.
        if ctx.settings.get("put_back"):
            return
        if ctx.settings.get("landed"):
            tick_landed(ctx)
        elif ctx.task is not None and ctx.workspace is not None:
            entry = cycles.task_entry(ctx.state, ctx.task.key, ctx.task.title)
            note = self.note(ctx)
            cycles.outcome(entry, self.how, note or "")
            entry[TICK_WAITING] = {"how": self.how, "note": note}


def tick_landed(ctx: PluginContext) -> None:
    """After a phase's ``tasks`` loop, its merged work in the work tree: the tasks whose
    tick waited for it are ticked, in plan order. Safe to run again: a tick already in
    PLAN.md is left as it is."""
    tasks = ctx.state.peek(f"{task_prefix(ctx.path)}/{TASKS}")
    if tasks is None:
        return
    for key in tasks.get("order") or []:
        entry = cycles.peek_task(ctx.state, key)
        waiting = entry.get(TICK_WAITING) if entry is not None else None
        if entry is None or not isinstance(waiting, dict):
            continue
        if plan_path(ctx).exists() and is_ticked(plan_path(ctx), key) is None:
            # Taken out of PLAN.md (or renamed) since it was approved: nothing to tick.
            entry.pop(TICK_WAITING, None)
            continue
        crash_point("implement.tick_landed")
        note = waiting.get("note") or None
        line = tick_task(plan_path(ctx), key, note)
        entry.pop(TICK_WAITING, None)
        ctx.record(
            "implement.ticked",
            task=key,
            line=line,
            how=waiting.get("how"),
            note=note,
            sync_now=True,
        )


class FixedTask(TickTask):
    """Fixed by hand and declared done by a person: ticked."""

    name = "implement-fixed"
    how = "fixed by hand"


class AcceptTask(TickTask):
    """Accepted as it is (a person's choice or the default action): ticked, with a note."""

    name = "implement-accept"
    how = "accepted"

    def note(self, ctx: PluginContext) -> str | None:
        return f"Accepted as is (phasegate): {_why(ctx)}"


class SkipTask(TickTask):
    """Skipped with a warning: ticked and marked, with the reason noted under it."""

    name = "implement-skip"
    how = "skipped"

    def note(self, ctx: PluginContext) -> str | None:
        return f"⚠️ Skipped with warning (phasegate): {_why(ctx)}"


class DefaultAction(Action):
    """Seed 004's timeout handling: log the event with context, take ``default_action``,
    notify, and go on (unless the action is ``abort_process``)."""

    name = "implement-default-action"
    outcomes = ACTIONS

    def run(self, ctx: PluginContext) -> str:
        assert ctx.task is not None
        settings = settings_of(ctx)
        escalation = settings.escalation
        node = agent_node(ctx)
        timed_out = node is not None and node.get("outcome") == "review-timeout"
        entry = cycles.task_entry(ctx.state, ctx.task.key, ctx.task.title)
        reviewer = None
        if node is not None:
            selected = (node.get("selected") or {}).get(f"{node.iteration}:reviewer") or {}
            reviewer = selected.get("role")
            if timed_out:
                cycles.reviewer_timed_out(entry, node.visit, node.iteration, _why(ctx))
        cause = "review timed out" if timed_out else "escalation not answered in time"
        # The limit and the setting that gives it: a person wanting longer knows what to raise.
        limit = (
            f"review_timeout_minutes: {settings.review_timeout_minutes:g}"
            if timed_out
            else f"escalation.timeout_minutes: {escalation.timeout_minutes or 0:g}"
        )
        message = (
            f"{ctx.item.name}: task {ctx.task.title!r}: {cause} ({limit} in "
            f"workflows.implement.settings); default action {escalation.default_action}"
        )
        ctx.record(
            "implement.escalation",
            task=ctx.task.key,
            title=ctx.task.title,
            cause=cause,
            cycle=node.iteration if node is not None else None,
            reviewer=reviewer,
            implementer=implementer_of(node),
            default_action=escalation.default_action,
            notification=escalation.notification_method,
            sync_now=True,
        )
        if escalation.notification_method == "console":
            print(f"phasegate: {ctx.item.redactor.text(message)}", file=sys.stderr, flush=True)
        return escalation.default_action


class CheckpointPassed(Action):
    """A phase's checks passed: its validation checkpoints (and its own checkbox) ticked."""

    name = "implement-checkpoint-passed"

    def run(self, ctx: PluginContext) -> str:
        assert ctx.task is not None
        check = ctx.state.peek(f"{task_prefix(ctx.path)}/checkpoint")
        ran = list(check.get("checks") or []) if check is not None else []
        phase = load_plan(ctx).phase(ctx.task.key)
        if phase is None:
            return "done"
        if phase.checkpoints and not any(not c.get("skipped") for c in ran):
            ctx.record("implement.checkpoint_unverified", phase=phase.title, sync_now=True)
            return "done"
        for checkpoint in phase.checkpoints:
            if not checkpoint.done:
                tick_task(plan_path(ctx), checkpoint.key)
        now = load_plan(ctx).phase(phase.key)
        if now is not None and now.checkbox_line is not None and now.done and not now.checked:
            renamed = ctx.state.data.get(PHASE_ALIASES) or {}
            heading = next((new for new, old in renamed.items() if old == phase.key), phase.key)
            tick_task(plan_path(ctx), heading)  # by the key its heading gives it now
        return "done"


# -- predicates ----------------------------------------------------------------------------


class Offers(Predicate):
    """Whether the escalation's configured ``actions`` include this one."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.name = f"implement-offers-{action}"

    def __call__(self, ctx: PluginContext) -> bool:
        return self.action in settings_of(ctx).escalation.actions


class EscalationDetail(Predicate):
    """The escalation's question: which task, how it stands, the choices escalation.actions
    leaves (fixing by hand is always one), the default."""

    name = "implement-escalation-detail"

    def __call__(self, ctx: PluginContext) -> str:
        assert ctx.task is not None
        escalation = settings_of(ctx).escalation
        if _agent_failed(ctx):
            return _failed_question(ctx, escalation.actions)
        minutes = escalation.timeout_minutes
        after = (
            f" Without an answer within {minutes:g} minutes: {escalation.default_action}."
            if minutes
            else ""
        )
        offered = escalation.actions
        choices = [
            *(["accept it as is"] if "accept_as_is" in offered else []),
            "fix it by hand",
            *(["skip it with a warning"] if "skip_with_warning" in offered else []),
            *(["abort"] if "abort_process" in offered else []),
        ]
        asked = f"{', '.join(choices[:-1])}, or {choices[-1]}?" if len(choices) > 1 else choices[0]
        return (
            f"Task {ctx.task.title!r} ({plan_rel(ctx.state)}:{ctx.task.line}) is escalated: "
            f"{_why(ctx)}. {asked[0].upper()}{asked[1:]}{after}"
        )


def _agent_failed(ctx: PluginContext) -> bool:
    """Whether the task's agent node ended ``failed`` (its call failed every attempt),
    ``blocked`` (its agent answered ``BLOCKED: reason``) or ``review-failed`` (its
    reviewer's call failed every attempt)."""
    node = agent_node(ctx)
    return node is not None and node.get("outcome") in (FAILED, BLOCKED, REVIEW_FAILED)


def _no_work(ctx: PluginContext) -> bool:
    """Whether the task's agent did no work to accept: its call failed, or it was blocked."""
    node = agent_node(ctx)
    return node is not None and node.get("outcome") in (FAILED, BLOCKED)


def _failed_question(ctx: PluginContext, offered: tuple[str, ...] | list[str]) -> str:
    """Seed 004's repeated agent failures: the task, the failure, and the choices (retry
    always; skipping and aborting where escalation.actions offers them)."""
    assert ctx.task is not None
    node = agent_node(ctx)
    outcome = node.get("outcome") if node is not None else None
    choices = [
        "retry the review" if outcome == REVIEW_FAILED else "retry it",
        *(["skip it with a warning"] if "skip_with_warning" in offered else []),
        *(["abort"] if "abort_process" in offered else []),
    ]
    asked = f"{', '.join(choices[:-1])}, or {choices[-1]}?" if len(choices) > 1 else choices[0]
    how = {BLOCKED: "is blocked", REVIEW_FAILED: "could not be reviewed"}.get(
        str(outcome), "failed"
    )
    return (
        f"Task {ctx.task.title!r} ({plan_rel(ctx.state)}:{ctx.task.line}) {how}: "
        f"{_why(ctx).removeprefix('its review failed: ').rstrip('.')}. "
        f"{asked[0].upper()}{asked[1:]}"
    )


class EscalationRecommendation(Predicate):
    """The answer an escalation suggests: the configured ``default_action`` (always one of
    ``actions``), never acceptance unless that is the default."""

    name = "implement-escalation-recommend"

    def __call__(self, ctx: PluginContext) -> str:
        return settings_of(ctx).escalation.default_action


class AbortedChoices(Predicate):
    """The answer an aborted task's message suggests, ``retry``, then the choices it takes
    in words (``retry (choices: retry, skip_with_warning)``): ``retry`` and those of
    ``skip_with_warning`` and ``accept_as_is`` that escalation.actions offers. The
    suggested command works pasted; the other choices are named, never joined into it."""

    name = "implement-aborted-choices"

    def __call__(self, ctx: PluginContext) -> str:
        offered = settings_of(ctx).escalation.actions
        # A task whose agent failed has no work to accept.
        offers = ("skip_with_warning",) if _no_work(ctx) else ACTIONS[:2]
        others = [a for a in offers if a in offered]
        if not others:
            return "retry"
        return f"retry (choices: {', '.join(['retry', *others])})"


LOAD_CONTEXT = LoadContext()
SNAPSHOT = SnapshotTask()
TRACK_REVIEW = TrackReview()
TICK = TickTask()
FIXED = FixedTask()
ACCEPT = AcceptTask()
SKIP = SkipTask()
DEFAULT_ACTION = DefaultAction()
CHECKPOINT_PASSED = CheckpointPassed()
OFFERS_SKIP = Offers("skip_with_warning")
OFFERS_ACCEPT = Offers("accept_as_is")
OFFERS_ABORT = Offers("abort_process")
ESCALATION_DETAIL = EscalationDetail()
ESCALATION_RECOMMEND = EscalationRecommendation()
ABORTED_CHOICES = AbortedChoices()
