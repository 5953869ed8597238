"""What ``phasegate status NAME --json`` prints for a work item (kept apart from
:mod:`phasegate.api`, which imports the whole engine, so ``status`` does not)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.engine.budget import BUDGET_DECISION, budget_status, caps_hold, question_lapsed
from phasegate.engine.live_run import failure_of as failure_of
from phasegate.engine.live_run import (
    last_event,
    last_failure,
    live_path,
    read_live,
    with_live_run,
)
from phasegate.engine.spend import Spend, read_spend

if TYPE_CHECKING:
    from phasegate.engine.item import WorkItem
    from phasegate.engine.state import EngineState


def status_of(item: WorkItem, state: EngineState) -> dict[str, Any]:
    """What ``phasegate status NAME --json`` prints for ``item``."""
    from phasegate.engine.answers import with_journaled_answers

    shown = with_journaled_answers(item, state)
    data = item.status(shown)
    worktree = state.worktree
    if worktree and data.get("nextCommand") and not (item.repo / worktree).is_dir():
        # Removed by hand or by `phasegate worktree remove`: a run would stop on it.
        branch = state.get("branch")
        again = f"git worktree prune && git worktree add {worktree}" + (
            f" {branch}" if branch else ""
        )
        data["nextCommand"] = f"{again} (its worktree is missing), then: {data['nextCommand']}"
    if state.status in ("completed", "stopped") or state.at == "@end":  # ended (blocked too)
        from phasegate.engine.fanout_git import task_worktrees

        left = task_worktrees(item.repo, item.name)
        if left:  # `phasegate worktree remove NAME` removes them
            data["taskWorktrees"] = {"paths": list(left.paths), "branches": list(left.branches)}
    data["budget"] = budget_status(item.config, item.workflow.name, state, item.journal.path)
    roles = item.workflow.roles
    if question_lapsed(item.config, item.workflow.name, shown, item.journal.path, roles):
        data = without_lapsed_question(item, data)
    data["usage"] = with_failed_attempts(data.get("usage"), read_spend(item.journal.path))
    live = read_live(live_path(item.run_lock_path))
    progress = data.get("inProgress") or {}
    held = progress.get("budget")
    if live is not None and held and held.get("answer") == "stop":
        # A run after the stop: it asks again, or the cap no longer holds the call.
        progress.pop("budget")
        progress["iteration"] = held["iteration"]
        for phase in data.get("phases") or []:
            if phase.get("node") == progress.get("node") and progress.get("kind") == "agent":
                phase["iterations"] = held["iteration"]
    elif (
        held
        and held.get("answer") == "stop"
        and not caps_hold(item.config, item.workflow.name, shown, item.journal.path, roles)
    ):
        # Stopped at a cap the config raised since: the next run goes on, asking nothing.
        data = without_lapsed_question(item, data)
    data = with_left_midway(data, live, item.journal.path)
    progress = data.get("inProgress") or {}
    if progress.get("interrupted") and (ahead := journal_ahead(item, state)):
        progress["journalAhead"] = ahead
    return with_live_run(data, live)


def without_lapsed_question(item: WorkItem, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (an item's status) without the ``budget`` question a cap raised in the
    config since it was asked (or answered ``stop``) made moot: not waiting, its call not
    held (``inProgress`` says ``capRaised``: the cap, and ``capRaisedAfterStop`` after a
    ``stop``), and the next command the one that goes on."""
    from phasegate.engine.status import again_command

    waiting = data.get("pendingDecisions") or []
    data["pendingDecisions"] = [d for d in waiting if d.get("id") != BUDGET_DECISION]
    progress = data.get("inProgress") or {}
    held = progress.pop("budget", None)
    if held is not None:
        progress["capRaised"] = held.get("cap")
        if held.get("answer") == "stop":
            progress["capRaisedAfterStop"] = True
        progress["iteration"] = held["iteration"]
        for phase in data.get("phases") or []:
            if phase.get("node") == progress.get("node") and progress.get("kind") == "agent":
                phase["iterations"] = held["iteration"]
    answer = next((d.get("command") for d in waiting if d.get("id") == BUDGET_DECISION), None)
    command = data.get("nextCommand")
    if isinstance(command, str) and command.endswith(RAISE_FLAG):
        # After a stop the next run was to raise the cap: it goes on without that now.
        data["nextCommand"] = command.removesuffix(RAISE_FLAG)
    elif command == answer:
        others = data["pendingDecisions"]
        data["nextCommand"] = (
            others[0].get("command")
            if others
            else again_command(item.workflow, item.name, data.get("label"))
        )
    return data


#: What the next command of an item stopped at a budget cap ends with (the run raises it).
RAISE_FLAG = f" --answer {BUDGET_DECISION}=raise"


def journal_ahead(item: WorkItem, state: EngineState) -> list[str]:
    """The nodes (top level) the journal's tail records the item went on to from the node
    its state file is at: a run killed after its journal said so and before its state file
    did; the next run walks those moves again first (``[]``: the state is not behind)."""
    from phasegate.engine.recorded import RecordedCalls, event_problem

    at = state.at if state.at is not None else item.workflow.start_node(state.mode)
    if at.startswith("@"):
        return []
    found = state.peek(at)
    visit = (found.visit if found is not None else 0) or 1
    from phasegate.errors import StateCorruptError

    try:
        tail = list(item.journal.tail(state.journal_offset, state.journal_lines + 1))
    except StateCorruptError:
        return []  # the run that reads it says so
    recorded = RecordedCalls(event for _, _, event in tail if event_problem(event) is None)
    return recorded.path_from(at, visit)


def with_left_midway(
    data: dict[str, Any], live: dict[str, Any] | None, journal: Path
) -> dict[str, Any]:
    """``data`` (an item's status) with ``lastFailure`` (the agent call its last run stopped
    on, or ``None``) and, when no run goes on (``live`` ``None``) yet the node it is at was
    left midway, ``inProgress.interrupted``: its last run was killed, interrupted (Ctrl-C)
    or stopped on an error; the next run resumes it."""
    progress = data.get("inProgress") or {}
    active = live is None and data.get("status") == "active"
    last = last_event(journal) if active else None
    data["lastFailure"] = last_failure(journal) if last is not None else None
    if active and progress and _ended_midway(data, last):
        progress["interrupted"] = True
    return data


def _ended_midway(data: dict[str, Any], last: dict[str, Any] | None) -> bool:
    """Whether the node ``data`` (an active item's status, no run going on) is at was left
    by its last run in the middle of its work, rather than waiting on a person (a pending
    decision, an answer not acted on yet, a budget cap), blocked or at a merge by hand."""
    progress = data.get("inProgress") or {}
    if data.get("blocked") or data.get("pendingDecisions") or progress.get("budget"):
        return False
    if progress.get("capRaised"):
        return False  # held by a cap raised since: the next run goes on (nothing was cut)
    if progress.get("stage") in ("answered", "conflict") or progress.get("kind") == "gate":
        return False
    if last is not None and last.get("event") == "decision.answered":
        return False  # answered by phasegate answer since the last run: it waits for a run
    if progress.get("kind") == "foreach":
        # A loop whose items are all done or wait on a merge was not interrupted; one with
        # an item not done (running, or not started: a run killed between two items) was
        # (the rule the table and the hook apply: live_run.left_midway).
        done = int(progress.get("itemsDone") or 0) + int(progress.get("itemsConflicted") or 0)
        return done < int(progress.get("items") or 0)
    return True


def with_failed_attempts(usage: dict[str, Any] | None, spend: Spend) -> dict[str, Any]:
    """The item's usage with its failed attempts added (their calls, tokens and cost, as
    the budget counts them), and ``failedCalls``: how many of the calls failed."""
    found = dict(usage or {})
    failed = spend.failed_usage()
    for key in ("calls", "inputTokens", "outputTokens"):
        found[key] = int(found.get(key, 0)) + int(failed[key])
    found["costUsd"] = round(float(found.get("costUsd", 0.0)) + float(failed["costUsd"]), 6)
    found["failedCalls"] = int(failed["failedCalls"])
    return found
