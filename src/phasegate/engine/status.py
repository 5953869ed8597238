"""Where an item stands: its label, node, iterations, concerns, decisions, and what to run next."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from phasegate.engine.answers import answered_warning_command, record_command
from phasegate.engine.budget import BUDGET_DECISION, unacted_answer
from phasegate.engine.node_state import NodeState
from phasegate.engine.state import EngineState
from phasegate.workflow.model import (
    AgentNode,
    CheckNode,
    EndNode,
    ForeachNode,
    GateNode,
    Workflow,
)
from phasegate.workflow.prompts import render
from phasegate.workflow.transitions import expected_next, producers, validate_transition


def camel_usage(usage: dict[str, Any] | None) -> dict[str, Any]:
    """Usage with the camelCase keys status and ``.meta.json`` use."""
    usage = usage or {}
    return {
        "calls": int(usage.get("calls", 0)),
        "inputTokens": int(usage.get("input_tokens", 0)),
        "outputTokens": int(usage.get("output_tokens", 0)),
        "cacheReadTokens": int(usage.get("cache_read_tokens", 0)),
        "cacheWriteTokens": int(usage.get("cache_write_tokens", 0)),
        "costUsd": float(usage.get("cost_usd", 0.0)),
    }


def phase_usage(state: EngineState, node_id: str) -> dict[str, Any]:
    """What the calls of top-level node ``node_id`` spent: its own and, for a loop, those of
    the nodes its items ran (``NODE[KEY]/...``), so that phase sums equal the item's."""
    total: dict[str, Any] = {}
    for path in state.paths():
        if path != node_id and not path.startswith((f"{node_id}[", f"{node_id}/")):
            continue
        found = state.peek(path)
        usage = found.get("usage") if found is not None else None
        if not isinstance(usage, dict):
            continue
        for key, value in usage.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    if "cost_usd" in total:
        total["cost_usd"] = round(float(total["cost_usd"]), 6)
    return total


def current_label(workflow: Workflow, state: EngineState) -> str | None:
    """The label of the node the item is at (the start node's for a new item).

    A view that reads a label back (STATE.yaml's ``phase``) records it in
    ``data.label``; it wins, as the seed's "the phase alone decides" requires.
    """
    forced = state.data.get("label")
    if isinstance(forced, str) and forced:
        return forced
    at = state.at
    if at == "@end":
        last = [n for n in workflow.nodes if isinstance(n, EndNode)]
        ended = state.data.get("end_label")
        return str(ended) if ended else (last[-1].label or last[-1].id if last else None)
    node_id = at or workflow.start_node(state.mode)
    return workflow.label_of(node_id)


def render_message(
    template: str, workflow: Workflow, state: EngineState, label: str | None, command: str | None
) -> str:
    """A command's message with ``{{ item }}``, ``{{ label }}``, ``{{ next }}`` filled."""
    values: dict[str, object] = {
        "item": state.item,
        "label": label or "",
        "phase": label or "",
        "description": state.get("description", ""),
        "workflow": workflow.name,
        "command": command or "",
    }
    values["next"] = next_for_label(workflow, state, label)
    return " ".join(render(template, values).split())


def next_for_label(workflow: Workflow, state: EngineState, label: str | None) -> str:
    info = workflow.labels.get(label or "")
    if info is not None and info.next:
        return " ".join(render(info.next, {"item": state.item, "label": label or ""}).split())
    return continue_command(workflow, state.item, label)


def continue_command(workflow: Workflow, item: str, label: str | None) -> str:
    """The command that goes on from ``label``: ``phasegate run ITEM``, or, for a workflow
    whose items run only through its commands, the command that runs in ``label``."""
    if not workflow.commands:
        return f"phasegate run {item}"
    from phasegate.suggested_commands import workflow_command

    name = command_for(workflow, label)
    if name is not None:
        return workflow_command(workflow.name, name, item)
    names = " or ".join(workflow.commands)
    return workflow_command(workflow.name, "NAME", item) + f" (NAME: {names})"


def again_command(workflow: Workflow, item: str, label: str | None) -> str:
    """The command that runs ``item`` on from ``label``: the label's own ``next`` when it
    is one that runs the item (``phasegate implement 006``), else
    :func:`continue_command`'s."""
    info = workflow.labels.get(label or "")
    if not workflow.commands and info is not None and info.next:
        words = render(info.next, {"item": item, "label": label or ""}).split()
        runs = len(words) == 3 and words[0] == "phasegate" and words[2] == item
        if runs and words[1] not in ("decisions", "answer", "status"):
            return " ".join(words)
    return continue_command(workflow, item, label)


def command_for(workflow: Workflow, label: str | None) -> str | None:
    """The command that goes on from ``label``: the one that runs in it, else one that runs
    in any label; at a label no command runs in (a gate without a label, say), the command
    whose run reaches it (running in a label that leads there, without stopping at it)."""
    for name, command in workflow.commands.items():
        if label in command.runs_in:
            return name
    for name, command in workflow.commands.items():
        if not command.runs_in:
            return name
    from phasegate.workflow.transitions import successors

    seen = {label}
    wanted = {label}
    while wanted:
        leading = {
            workflow.label_of(node.id)
            for node in workflow.nodes
            if any(workflow.label_of(after) in wanted for after in successors(workflow, node.id))
        } - seen
        for name, command in workflow.commands.items():
            if label not in command.stops_at and leading & set(command.runs_in):
                return name
        seen |= leading
        wanted = {found for found in leading if not command_runs_in(workflow, found)}
    return None


def command_runs_in(workflow: Workflow, label: str | None) -> bool:
    """Whether one of the workflow's commands names ``label`` among those it runs in."""
    return any(label in command.runs_in for command in workflow.commands.values())


#: The state's record of the step that refused to go on in the item's last run (an
#: action, a loop's items or their worktrees): ``{node, message}``; the next run clears it.
REFUSED = "refused"

#: The review values of an agent step no reviewer looked at: ``none`` (it has no
#: reviewers) and ``skipped`` (--no-review, or every reviewer's ``when``/selector
#: skipped it). Such a step adds no review iteration.
UNREVIEWED = ("none", "skipped")


def phase_iterations(phase: Mapping[str, Any]) -> str:
    """A phase's iterations as shown: ``-`` for a step whose review was skipped and that ran
    once (no reviewer looked at it; a check that failed makes another iteration, counted)."""
    if phase.get("review") == "skipped" and int(phase.get("iterations") or 0) <= 1:
        return "-"
    return str(phase.get("iterations") or "")


def completion_summary(
    workflow: Workflow, state: EngineState, *, accepted: Collection[str] = ()
) -> str:
    """One line that stays in the state after the review history is deleted.

    Every agent step that finished counts, reviewed or not (a node without reviewers
    completes after its executor's call); only reviewed steps add review iterations (not
    a step whose reviewers were all skipped: no reviewer looked at it). The concerns of
    the nodes in ``accepted`` were accepted by a person as known issues: said so.
    """
    run: list[str] = []
    total = 0
    concerns: list[str] = []
    known: list[str] = []
    for node in workflow.nodes:
        found = state.peek(node.id)
        if not isinstance(node, AgentNode) or found is None or not _finished(found):
            continue
        run.append(node.label or node.id)
        if found.get("review") not in UNREVIEWED:
            total += found.iteration
        if found.get("review") in ("concerns", "checks-failed"):
            (known if node.id in accepted else concerns).append(node.label or node.id)
    items = 0
    for path in state.paths():
        if "[" not in path:
            continue
        found = state.peek(path)
        if found is None or not _finished(found):
            continue
        items += 1
        if found.get("review") not in UNREVIEWED:
            total += found.iteration
        if found.get("review") == "concerns":
            (known if path in accepted else concerns).append(path)
    done = _count(len(run), "phase") + (f" and {_count(items, 'loop item step')}" if items else "")
    text = f"{done} completed " + (
        f"in {_count(total, 'review iteration')}" if total else "without review"
    )
    if concerns:
        text += f"; unresolved reviewer concerns in {', '.join(concerns)}"
    if known:
        text += f"; known issues accepted in {', '.join(known)}"
    return text + "."


def _finished(found: NodeState) -> bool:
    """Whether an agent step finished: reviewed, or (no reviewers) its call passed."""
    review = found.get("review")
    if review is None:
        return False
    return bool(review != "none" or found.get("outcome") == "pass")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _node_status(
    workflow: Workflow, state: EngineState, node_id: str, found: NodeState | None
) -> str:
    if node_id in workflow.modes[state.mode].skip or (found is not None and found.get("skipped")):
        return "skipped"
    if found is None or not found.get("started"):
        return "pending"
    if isinstance(workflow.node(node_id), CheckNode) and found.get("outcome") not in (None, "pass"):
        return "failed"  # its last run's commands failed (it is not done, even if the run went on)
    if found.get("outcome") is not None and not found.get("blocked"):
        return "completed"
    if isinstance(workflow.node(node_id), GateNode) and state.at != node_id:
        return "skipped"  # left unanswered (run --phase past it): it waits for nobody
    return "in-progress"


def _completed(workflow: Workflow, state: EngineState) -> set[str]:
    """The top-level nodes that have an outcome (asked only before a node starts)."""
    return {
        n.id
        for n in workflow.nodes
        if (f := state.peek(n.id)) is not None and f.get("outcome") is not None
    }


def _node_limit(
    workflow: Workflow, state: EngineState, at: str, cursor: NodeState, limit: int
) -> int:
    """The review iterations the agent node at ``at`` may use (its budget, a gate's
    extensions included, as the run counts them); ``limit`` for other nodes."""
    node = workflow.node(at)
    if not isinstance(node, AgentNode):
        return limit
    budget = node.budget
    if budget.revisions is not None:
        base = budget.revisions + 1
    elif isinstance(budget.max, int):
        base = budget.max
    else:
        raw = state.data.get(budget.max) if budget.max != "mode" else None
        base = raw if isinstance(raw, int) and raw > 0 else limit
    return base + int(cursor.get("extra_budget", 0) or 0)


def item_head(
    workflow: Workflow,
    state: EngineState,
    *,
    artifacts: Mapping[str, bool] | Callable[[], Mapping[str, bool]],
) -> dict[str, Any]:
    """What status says of the item as a whole (no per-node detail): cheap at every commit."""
    name = state.item
    limit = workflow.max_iterations(state.mode)
    at = state.at
    if at is not None and (not at or at.startswith("@")):
        at = None
    label = current_label(workflow, state)
    in_progress: dict[str, Any] | None = None
    cursor = state.peek(at) if at else None
    if at and cursor is not None and cursor.get("started") and cursor.get("outcome") is None:
        node_at = workflow.node(at)
        kind = node_at.kind
        in_progress = {
            "phase": workflow.label_of(at),
            "node": at,
            "kind": kind,
            "iteration": cursor.iteration,
            "maxIterations": _node_limit(workflow, state, at, cursor, limit),
            "stage": _stage(kind, cursor),
        }
        held = budget_hold(state, at)
        if held is not None:
            # A budget cap holds the node's next call: while its executor's call waits,
            # the iteration it would start has not started.
            in_progress["budget"] = {**held, "iteration": cursor.iteration}
            if kind == "agent" and str(cursor.stage or "execute") == "execute":
                in_progress["iteration"] = max(cursor.iteration - 1, 0)
        if isinstance(node_at, GateNode) and _answered_gate(workflow, state):
            # Answered (by phasegate answer), not yet acted on: the next run does.
            record = state.decisions[node_at.decision or node_at.id]
            in_progress.update(
                stage="answered",
                decision=record.get("id", node_at.decision or node_at.id),
                answer=(record.get("answer") or {}).get("choice"),
            )
        if isinstance(node_at, ForeachNode) and cursor.get("order") is not None:
            entries = cursor.get("items") or {}
            order = list(cursor.get("order") or [])
            # An item whose work waits on a merge conflict is not done until it is merged.
            conflicted = {
                str(c.get("owner"))
                for c in ((cursor.get("fanout") or {}).get("conflicts") or {}).values()
                if not c.get("commit")
            }
            done = sum(
                1
                for k in order
                if entries[k].get("status") in ("done", "skipped") and k not in conflicted
            )
            in_progress.update(
                kind="foreach",
                itemsDone=done,
                items=len(order),
                itemsConflicted=len(conflicted & set(order)),
            )
            inside = _answered_inside(state, f"{at}[")
            if inside:
                # An item's gate answered (by phasegate answer), not yet acted on.
                in_progress.update(
                    stage="answered",
                    decision=inside[0].get("id"),
                    answer=(inside[0].get("answer") or {}).get("choice"),
                )
    next_phase: str | None = None
    blocked: str | None = None
    #: What blocked the item, for readers that must not parse the message: ``checks``
    #: (the node's checks still failed when its iterations were spent), ``outcome`` (another
    #: outcome mapped to ``@blocked``) or ``prerequisites`` (a file the node needs).
    blocked_by: dict[str, str] | None = None
    kept: dict[str, str] | None = None
    if state.status == "active":
        if at is not None:
            next_phase = workflow.label_of(at)
            node = workflow.node(at)
            started = cursor is not None and cursor.get("started")
            if not started and getattr(node, "previous_required", False):
                previous = str(getattr(node, "previous", None) or "")
                ended = _completed(workflow, state)
                made = [p for p in producers(workflow, previous) if p in ended] if previous else []
                if made:  # the SessionStart hook checks the file is still there
                    kept = {"file": previous, "madeBy": made[0]}
            if cursor is not None and cursor.get("blocked"):
                blocked = str(cursor.get("blocked"))
                by = "checks" if cursor.get("review") == "checks-failed" else "outcome"
                blocked_by = {"by": by, "node": at}
            elif started and isinstance(node, ForeachNode):
                stuck = _blocked_node_inside(state, f"{at}[")
                blocked = str(stuck.get("blocked")) if stuck is not None else None
                if stuck is not None:  # an item's node: its checks, or another outcome
                    by = "checks" if stuck.get("review") == "checks-failed" else "outcome"
                    blocked_by = {"by": by, "node": at}
            elif not started and (
                node.prerequisites.hard
                or node.prerequisites.soft
                or getattr(node, "previous_required", False)
            ):
                files = artifacts() if callable(artifacts) else artifacts
                result = validate_transition(
                    workflow,
                    None,
                    at,
                    files,
                    completed=_completed(workflow, state),
                    skipped=workflow.modes[state.mode].skip,
                    item=state.item,
                )
                if result.type == "blocked":
                    blocked = result.message
                    blocked_by = {"by": "prerequisites", "node": at}
            refused = state.d.get(REFUSED)
            if blocked is None and isinstance(refused, Mapping) and refused.get("node") == at:
                # A step of its last run refused to go on (the run said why): it still does
                # until something changes, and a run tries again.
                blocked = str(refused.get("message") or "")
                blocked_by = {"by": "refused", "node": at}
        else:
            completed = _completed(workflow, state)
            start = workflow.start_node(state.mode)
            names = (
                [start]  # a mode (or workflow) that starts later than the first node
                if not completed and start != workflow.nodes[0].id
                else expected_next(workflow, None, completed, workflow.modes[state.mode].skip)
            )
            next_phase = workflow.label_of(names[0]) if names else None
    decisions = [d for d in state.decisions.values() if d.get("status") == "pending"]
    return {
        "id": name,
        "workflow": workflow.name,
        "description": state.get("description", ""),
        "mode": state.mode,
        "status": state.status,
        "label": label,
        "at": at,
        "inProgress": in_progress,
        "nextPhase": next_phase,
        "blocked": blocked,
        "blockedBy": blocked_by,
        #: The previous artifact the node at requires and the completed node that made it.
        "previousRequired": kept,
        "pendingDecisions": [
            {
                "id": d["id"],
                "question": d.get("question"),
                "choices": list(d.get("choices") or {}),
                "command": record_command(name, d),
            }
            for d in decisions
        ],
        "nextCommand": next_command(workflow, state, label, blocked, decisions),
        "worktree": state.worktree,
        "branch": state.get("branch"),
    }


def item_status(
    workflow: Workflow,
    state: EngineState,
    *,
    artifacts: Mapping[str, bool] | Callable[[], Mapping[str, bool]],
) -> dict[str, Any]:
    """A JSON-ready summary of ``state`` (what ``phasegate status --json`` prints)."""
    head = item_head(workflow, state, artifacts=artifacts)
    phases: list[dict[str, Any]] = []
    concerns: list[dict[str, str]] = []
    for node in workflow.nodes:
        if isinstance(node, EndNode):
            continue
        found = state.peek(node.id)
        entry: dict[str, Any] = {
            "name": node.label or node.id,
            "node": node.id,
            "kind": node.kind,
            "status": _node_status(workflow, state, node.id, found),
            "iterations": found.iteration
            if isinstance(node, AgentNode) and found is not None and found.get("started")
            else 0,
            "review": found.get("review") if found is not None else None,
            "reviewerNotes": list(found.get("notes") or []) if found is not None else [],
            "usage": camel_usage(phase_usage(state, node.id)) if found is not None else None,
        }
        if node.kind in ("gate", "check") and found is not None and found.get("outcome"):
            entry["outcome"] = found.get("outcome")  # the answer chosen, or pass / fail
        held = head["inProgress"]
        if held and held.get("budget") and held["node"] == node.id and node.kind == "agent":
            entry["iterations"] = held["iteration"]  # not the one a budget cap holds back
        if isinstance(node, ForeachNode) and found is not None and found.get("order") is not None:
            entry["items"] = foreach_items(state, node.id, found)
        phases.append(entry)
        concerns += [{"phase": entry["name"], "note": n} for n in entry["reviewerNotes"]]
    order = ("id", "workflow", "description", "mode", "status", "label", "at")
    status = {key: head[key] for key in order}
    status["currentPhase"] = _current_phase(workflow, state)
    status.update({key: value for key, value in head.items() if key not in status})
    status["phases"] = phases
    status["unresolvedConcerns"] = concerns
    status["usage"] = camel_usage(state.get("usage"))
    status["summary"] = state.get("summary")
    status["endMessage"] = end_message(workflow, state)
    return status


def end_message(workflow: Workflow, state: EngineState) -> str | None:
    """The message of the end node the item reached (``dropped at the gate``), if it has one."""
    if state.at != "@end":
        return None
    label = state.data.get("end_label")
    ends = [n for n in workflow.nodes if isinstance(n, EndNode) and n.message]
    ends = [n for n in ends if workflow.label_of(n.id) == label]
    reached = {str(f.get("target")) for p in state.paths() if (f := state.peek(p)) is not None}
    ends = [n for n in ends if n.id in reached] or ends
    return " ".join(str(ends[0].message).split()) if ends else None


def budget_hold(state: EngineState, at: str) -> dict[str, Any] | None:
    """The budget cap that holds the next call of the node at ``at`` (of a loop: of one of
    its items), if one does: ``{cap, answer}``, ``answer`` ``None`` while the ``budget``
    question waits, ``raise`` while a raise waits for the next run, ``stop`` once a run
    stopped on that answer (the next run asks again), or before, with ``nextRunStops``
    (the next run stops on it)."""
    decision = state.decisions.get(BUDGET_DECISION)
    record = state.get("budget")
    asked = record.get("asked") if isinstance(record, Mapping) else None
    if not isinstance(decision, Mapping) or not isinstance(asked, Mapping):
        return None
    inside = f"{at}["  # the nodes of a loop's items: ``LOOP[KEY]/NODE``
    if not all(
        str(node) == at or str(node).startswith(inside)
        for node in (decision.get("context"), asked.get("node"))
    ):
        return None
    if int(decision.get("visit", 0)) != asked.get("visit"):
        return None
    if record.get("went_on") == asked.get("visit"):
        return None  # the held call went ahead (a raise, or a cap changed after a stop)
    found = state.peek(at)
    entered = str(found.get("entered") or "")[:19] if found is not None else ""
    if entered > str(decision.get("asked_at") or "")[:19]:
        return None  # asked at an earlier visit of the node
    answer = (decision.get("answer") or {}).get("choice")
    if decision.get("status") == "pending":
        answer = None
    elif decision.get("status") != "answered" or (
        answer != "stop" and unacted_answer(state) is None
    ):
        return None  # a raise acted on: the call went on
    held: dict[str, Any] = {"cap": asked.get("cap"), "answer": answer}
    if answer == "stop" and unacted_answer(state) is not None:
        held["nextRunStops"] = True
    return held


def blocked_inside(state: EngineState, prefix: str) -> str | None:
    """Why a node under ``prefix`` (a foreach's items) stopped the run, if one did: a node
    that ended in an outcome mapped to ``@blocked`` keeps it until it is run again."""
    found = _blocked_node_inside(state, prefix)
    return str(found.get("blocked")) if found is not None else None


def _blocked_node_inside(state: EngineState, prefix: str) -> NodeState | None:
    """The node under ``prefix`` that stopped the run on an outcome mapped to ``@blocked``."""
    for path in state.paths():
        if path.startswith(prefix):
            found = state.peek(path)
            if found is not None and found.get("blocked") and found.get("outcome") is not None:
                return found
    return None


def foreach_items(state: EngineState, path: str, found: Any) -> list[dict[str, Any]]:
    """A foreach's items as ``status`` lists them: done, running, waiting, answered,
    failed, pending.

    ``waiting``: a decision inside the item waits for a person; ``answered``: a gate inside
    it was answered (``decision``, ``answer``) and the next run acts on it; ``failed``: the
    item ended other than done, or its last run stopped on an error.
    """
    items = found.get("items") or {}
    waiting = {
        str(d.get("context") or "")
        for d in state.decisions.values()
        if d.get("status") == "pending"
    }
    answered = _answered_inside(state, f"{path}[")
    budget = state.decisions.get(BUDGET_DECISION) if unacted_answer(state) else None
    listed: list[dict[str, Any]] = []
    for key in found.get("order") or []:
        entry = items[key]
        raw = str(entry.get("status"))
        prefix = f"{path}[{key}]/"
        parked = str(entry.get("parked") or "")
        stopped = blocked_inside(state, prefix) if raw == "running" else None
        gate = next((d for d in answered if str(d.get("context")).startswith(prefix)), None)
        if gate is None and parked and entry.get("waits_on") == BUDGET_DECISION and budget:
            gate = budget  # the budget question another item's call asked, answered
        if stopped is not None:
            shown = "failed"  # its last run stopped on a blocked outcome
            parked = parked or stopped
        elif raw in ("running", "done") and any(w.startswith(prefix) for w in waiting):
            shown = "waiting"
        elif raw == "running" and gate is not None:
            shown = "answered"  # its gate's answer waits for the next run
        elif raw in ("running", "done") and parked:
            shown = "waiting" if parked.startswith("waiting") else "failed"
        elif raw in ("running", "pending", "done", "skipped"):
            shown = raw
        else:
            shown = "failed"
        item: dict[str, Any] = {
            "key": key,
            "title": entry.get("title", ""),
            "status": shown,
            "outcome": raw,
            "at": entry.get("at"),
            "deps": list(entry.get("deps") or []),
        }
        if shown == "answered" and gate is not None:
            item["decision"] = gate.get("id")
            item["answer"] = (gate.get("answer") or {}).get("choice")
        if parked:
            item["reason"] = parked.split(": ", 1)[-1]
        if entry.get("worktree") and raw != "done":
            item["worktree"] = entry["worktree"]
        listed.append(item)
    return listed


def _stage(kind: str, cursor: Any) -> str:
    """Where a started node stands: an agent's stage, a gate's decision, a foreach's item."""
    if kind == "gate":
        return "decision"
    if kind == "foreach":
        items = cursor.get("items") or {}
        running = [k for k in cursor.get("order") or [] if items[k].get("status") == "running"]
        return f"item {running[0]}" if running else "items"
    return str(cursor.stage or "execute").split(":", 1)[0]


def _current_phase(workflow: Workflow, state: EngineState) -> str | None:
    """The last phase started (seed 000's ``currentPhase``)."""
    current: str | None = None
    for node in workflow.nodes:
        found = state.peek(node.id)
        if found is not None and found.get("started"):
            current = node.label or node.id
    at = state.at
    if at and not at.startswith("@"):
        found = state.peek(at)
        if found is not None and found.get("started"):
            return workflow.label_of(at)
    return current


def next_command(
    workflow: Workflow,
    state: EngineState,
    label: str | None,
    blocked: str | None,
    decisions: list[dict[str, Any]],
) -> str | None:
    """The command a person (or agent) should run next, or ``None`` when done."""
    if state.status in ("completed", "stopped") or (
        state.status == "blocked" and state.at == "@end"
    ):
        return None  # it ended: nothing is left to run
    if decisions:
        return record_command(state.item, decisions[0])
    answered = answered_warning_command(state.item, state.decisions)
    if answered is not None:
        return answered
    held = budget_hold(state, state.at) if state.at else None
    if held is not None and held["answer"] == "stop":
        # Not acted on yet: the next run stops on it (an --answer would not be followed).
        # A run stopped at the cap as answered: running again asks again; this raises it.
        again = again_command(workflow, state.item, label)
        if held.get("nextRunStops"):
            return again
        if again.startswith(("phasegate run ", "phasegate implement ")) and "(" not in again:
            return f"{again} --answer budget=raise"
        return again
    if blocked:
        return f"fix the block, then: {again_command(workflow, state.item, label)}"
    if _answered_gate(workflow, state):
        # Its answer waits for a run to act on it (a label's own next, such as
        # "phasegate decisions", would show nothing waiting).
        return again_command(workflow, state.item, label)
    # A gate inside a loop's item answered: the loop's label says how its run goes on
    # (`phasegate implement ID` for an implement item).
    return next_for_label(workflow, state, label)


def _answered_gate(workflow: Workflow, state: EngineState) -> bool:
    """Whether the item is at a top-level gate whose decision was answered (by
    ``phasegate answer``) and no run has acted on it yet."""
    at = state.at
    if not at or at.startswith("@") or "/" in at:
        return False
    try:
        node = workflow.node(at)
    except KeyError:
        return False
    if not isinstance(node, GateNode):
        return False
    record = state.decisions.get(node.decision or node.id)
    found = state.peek(at)
    return (
        isinstance(record, Mapping)
        and record.get("status") == "answered"
        and (found is None or found.get("outcome") is None)
    )


def _answered_inside(state: EngineState, prefix: str) -> list[Mapping[str, Any]]:
    """The decisions of gates under ``prefix`` (a foreach's items: ``NODE[``) answered by
    ``phasegate answer`` that no run has acted on yet: the gate's current visit started
    and has no outcome."""
    found: list[Mapping[str, Any]] = []
    for record in state.decisions.values():
        context = str(record.get("context") or "")
        if record.get("status") != "answered" or not context.startswith(prefix):
            continue
        if record.get("id") == BUDGET_DECISION and unacted_answer(state) is None:
            continue  # a run acted on it (a raise added, or it stopped there)
        gate = state.peek(context)
        if gate is None or not gate.get("started") or gate.get("outcome") is not None:
            continue
        if record.get("visit") is not None and record.get("visit") != gate.get("visit"):
            continue  # answered at an earlier visit of the gate
        found.append(record)
    return found


def brief(status: Mapping[str, Any]) -> dict[str, Any]:
    """The few fields the SessionStart hook and the item list show, from a full status."""
    phases = status.get("phases") or []
    return brief_of(
        status,
        iterations=sum(
            int(p.get("iterations") or 0) for p in phases if p.get("review") not in UNREVIEWED
        ),
        concerns=[(c["phase"], c["note"]) for c in status.get("unresolvedConcerns") or []],
    )


def brief_of(
    head: Mapping[str, Any], *, iterations: int, concerns: Sequence[tuple[str, Any]]
) -> dict[str, Any]:
    """The brief from status's item-wide fields, the review iterations and the concerns."""
    shown = [
        [phase, (str(note).splitlines() or [""])[0][:200]]
        for phase, note in concerns[:MAX_BRIEF_CONCERNS]
    ]
    return {
        "workflow": head.get("workflow"),
        "mode": head.get("mode"),
        "description": " ".join(str(head.get("description") or "").split())[:300],
        "status": head.get("status"),
        "label": head.get("label"),
        "currentPhase": head.get("currentPhase"),
        "inProgress": head.get("inProgress"),
        "nextPhase": head.get("nextPhase"),
        "at": head.get("at"),
        "iterations": iterations,
        "concerns": shown,
        "concernsCount": len(concerns),
        "blocked": head.get("blocked"),
        "blockedBy": head.get("blockedBy"),
        "previousRequired": head.get("previousRequired"),
        "nextCommand": head.get("nextCommand"),
        "decisions": [
            {"id": d["id"], "question": d.get("question"), "command": d.get("command")}
            for d in head.get("pendingDecisions") or []
        ],
        "worktree": head.get("worktree"),
        "branch": head.get("branch"),
        **_known_issues(head.get("knownIssues")),
    }


def _known_issues(issues: Any) -> dict[str, Any]:
    """The brief's ``knownIssues`` (the first line of each issue a person accepted, team:
    "accept with known issues") and ``knownIssuesCount``; nothing when there are none."""
    if not issues:
        return {}
    found = [str(issue) for issue in issues]
    return {
        "knownIssues": [
            (issue.splitlines() or [""])[0][:200] for issue in found[:MAX_BRIEF_CONCERNS]
        ],
        "knownIssuesCount": len(found),
    }


MAX_BRIEF_CONCERNS = 3
