"""What the engine state of a ``team`` session means in seed 003's terms.

The engine records nodes, decisions and usage; these functions read that
record as the seed's ``current_state``, ``user_decisions``, ``retry_counts``,
``gate_tracking`` and ``known_issues``. They never decide anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phasegate.engine.node_state import NodeState
from phasegate.engine.state import EngineState
from phasegate.engine.walk import definition_path
from phasegate.state.journal import utc_now
from phasegate.workflow.model import ForeachNode, GateNode, Workflow

APPROVE_DESIGN = "UD-APPROVE-DESIGN"
REVIEW_STRATEGY = "UD-REVIEW-STRATEGY"
#: Decision ids that appear once per session (re-asking updates the entry in place).
WELL_KNOWN = (APPROVE_DESIGN, REVIEW_STRATEGY)
MANDATORY_GATES = ("approve-design", "review-strategy")
#: The correction nodes of APPROVE_DESIGN and the seed's name of the agent each runs.
CORRECTIONS = {
    "correct-spec": "SpecAgent",
    "correct-architecture": "Architect",
    "correct-design": "Designer",
}
FOREACHES = ("tasks", "tasks-single")
REPAIRS = {"review": "FIX_REVIEW", "qa": "FIX_TESTS", "security": "FIX_SECURITY"}
META_REPAIRS = {
    "final-review": "FIX_REVIEW",
    "final-qa": "FIX_TESTS",
    "final-security": "FIX_SECURITY",
}
FIX_BUILD_NODE = "fix-build"
#: The seed's agent names of the workflow's roles.
AGENT_NAMES = {
    "spec-agent": "SpecAgent",
    "researcher": "Researcher",
    "architect": "Architect",
    "designer": "Designer",
    "planner": "Planner",
    "coder": "Coder",
    "reviewer": "Reviewer",
    "qa": "QA",
    "security": "Security",
    "integrator": "Integrator",
    "docs": "Docs",
}
#: Agents every full run dispatches at least once (lean: Coder and Reviewer).
CORE_FULL = (
    "spec-agent",
    "architect",
    "planner",
    "coder",
    "reviewer",
    "qa",
    "security",
    "integrator",
    "docs",
)
CORE_LEAN = ("coder", "reviewer")
#: ASK_USER answers that go on with known issues, and how a known issue names them.
ACCEPTING = {"accept": "accepted", "defer": "deferred"}


def team_data(state: EngineState) -> dict[str, Any]:
    """The ``team`` workflow's own values in the engine state."""
    found = state.data.setdefault("team", {})
    assert isinstance(found, dict)
    return found


def position(workflow: Workflow, state: EngineState) -> str | None:
    """The deepest node path the session stands at (inside a task's body when in one)."""
    at = state.at
    if not at or at.startswith("@"):
        return None
    path = at
    node = workflow.node(definition_path(path))
    while isinstance(node, ForeachNode):
        found = state.peek(path)
        if found is None:
            break
        items = found.get("items") or {}
        order = found.get("order") or []
        running = [k for k in order if items.get(k, {}).get("status") == "running"]
        inner = items[running[0]].get("at") if running else None
        if not inner:
            break
        path = f"{path}[{running[0]}]/{inner}"
        node = workflow.node(definition_path(path))
    return path


def _fix_kind(node_id: str) -> str | None:
    if node_id == FIX_BUILD_NODE:
        return "FIX_BUILD"
    return REPAIRS.get(node_id) or META_REPAIRS.get(node_id)


def current_state(workflow: Workflow, state: EngineState) -> tuple[str, dict[str, str] | None]:
    """The seed's ``current_state`` and, when BLOCKED, the blocker (reason and message)."""
    if state.status == "completed":
        return "DONE", None
    if state.status == "blocked":
        return "BLOCKED", {"reason": "blocked", "message": str(state.get("summary") or "")}
    path = position(workflow, state)
    if path is None:
        return workflow.label_of(workflow.start_node(state.mode)), None
    found = state.peek(path)
    node = workflow.node(definition_path(path))
    if found is not None and found.get("blocked"):
        return "BLOCKED", {"reason": _blocker(node.id, found), "message": str(found["blocked"])}
    kind = _fix_kind(node.id)
    if kind is not None and found is not None and found.get("started"):
        fixing = found.stage == "execute" and (node.id == FIX_BUILD_NODE or found.iteration > 1)
        if fixing:
            return kind, None
    return workflow.label_of(definition_path(path)), None


def _blocker(node_id: str, found: NodeState) -> str:
    if node_id in MANDATORY_GATES:
        return "mandatory_user_decision_missing"
    if node_id.endswith("-verify"):
        return "decision_not_verified"
    if node_id.endswith("-check"):
        return "status_json_invalid"
    if found.get("outcome") == "gate-failed":
        return "gate_failed"
    return "blocked"


def state_context(workflow: Workflow, context: str) -> str:
    """The workflow state a decision was asked in: the gate itself for APPROVE_DESIGN and
    REVIEW_STRATEGY, the state that led to it for an ASK_USER decision."""
    path = definition_path(context)
    try:
        label = workflow.label_of(path)
    except KeyError:
        return "ASK_USER"
    if label != "ASK_USER":
        return label
    prefix, _, own = path.rpartition("/")
    for node in workflow.scope_of(path):
        leads = set(node.on.values())
        if isinstance(node, GateNode):
            continue
        if own in leads:
            return workflow.label_of(f"{prefix}/{node.id}" if prefix else node.id)
    return workflow.label_of(prefix) if prefix else label


def _where(context: str) -> str:
    """The task a decision belongs to (``tasks[T1]/review-exhausted`` -> ``T1``), else meta."""
    head = context.split("/", 1)[0]
    return head[head.index("[") + 1 : -1] if "[" in head else "meta"


def decision_entry(workflow: Workflow, record: Mapping[str, Any]) -> dict[str, Any]:
    """One ``user_decisions`` entry of status.json from the engine's decision record."""
    answer = record.get("answer") or {}
    choice = answer.get("choice")
    note = str(answer.get("note") or "")
    entry: dict[str, Any] = {
        "decision_id": str(record["id"]),
        "question": str(record.get("question") or ""),
        "choices": list(record.get("choices") or {}),
        "status": "pending",
        "answer": None,
        "answered_by": None,
        "asked_at": record.get("asked_at"),
        "resolved_at": None,
        "state_context": state_context(workflow, str(record.get("context") or "")),
        "resolution_reason": None,
        "visit": max(int(record.get("visit") or 1), 1),
    }
    if record.get("status") != "answered" or not choice:
        return entry
    entry["answered_by"] = answer.get("by")
    entry["resolved_at"] = answer.get("answered_at") or utc_now()
    if choice in ("cancel", "invalid"):
        entry["status"] = "cancelled"
        entry["answer"] = None
        reason = "cancelled by the user" if choice == "cancel" else "no valid answer"
        entry["resolution_reason"] = f"{reason}: {note}" if note else reason
    else:
        entry["status"] = "answered"
        # The strategy is persisted as its canonical value only (a note is not part of it).
        keep_note = note and record["id"] != REVIEW_STRATEGY
        entry["answer"] = f"{choice}: {note}" if keep_note else str(choice)
    return entry


def known_issue(state: EngineState, record: Mapping[str, Any]) -> str | None:
    """What a person accepted at an ASK_USER decision, as a known issue (``None`` if nothing)."""
    answer = record.get("answer") or {}
    if record.get("status") != "answered" or answer.get("choice") not in ACCEPTING:
        return None
    context = str(record.get("context") or "")
    gate = state.peek(context)
    issues = list(((gate.get("incoming") if gate is not None else None) or {}).get("issues") or [])
    found = "; ".join(
        f"[{i.get('severity', 'medium')}] "
        + (str(i.get("description") or "").strip().splitlines() or [""])[0]
        for i in issues
    )
    note = str(answer.get("note") or "").strip()
    text = f"{_where(context)}: {ACCEPTING[str(answer['choice'])]} at {record['id']}"
    if found:
        text += f": {found}"
    if note:
        text += f" (note: {note})"
    return text


def accepted_notes(state: EngineState) -> set[str]:
    """The nodes whose reviewer notes (or failing checks) a person accepted at an ASK_USER
    decision as known issues: the node that led to the gate answered ``accept`` or
    ``defer``, not entered again since (a later visit's notes are its own)."""
    found: set[str] = set()
    for record in state.decisions.values():
        choice = (record.get("answer") or {}).get("choice")
        if record.get("status") != "answered" or choice not in ACCEPTING:
            continue
        gate = state.peek(str(record.get("context") or ""))
        source = ((gate.get("incoming") if gate is not None else None) or {}).get("from")
        node = state.peek(str(source)) if source else None
        if gate is None or node is None:
            continue
        if str(node.get("entered") or "") <= str(gate.get("entered") or ""):
            found.add(str(source))
    return found


def fixes(found: NodeState | None) -> int:
    """The repair rounds a review node has run (each revision after its first review)."""
    if found is None or not found.get("started"):
        return 0
    return max(found.iteration - 1, 0)


def retry_counts(state: EngineState) -> dict[str, dict[str, int]]:
    """``retry_counts``: per task (and ``meta``) the rounds of each repair loop."""
    counts: dict[str, dict[str, int]] = {}
    for foreach in FOREACHES:
        found = state.peek(foreach)
        if found is None:
            continue
        for key in found.get("order") or []:
            row = {kind: fixes(state.peek(f"{foreach}[{key}]/{n}")) for n, kind in REPAIRS.items()}
            counts[key] = {**row, "FIX_BUILD": 0}
    meta = {kind: fixes(state.peek(n)) for n, kind in META_REPAIRS.items()}
    build = state.peek(FIX_BUILD_NODE)
    meta["FIX_BUILD"] = build.iteration if build is not None and build.get("started") else 0
    if any(meta.values()) or any(state.peek(n) is not None for n in META_REPAIRS):
        counts["meta"] = meta
    return counts


def last_ci_result(state: EngineState) -> str:
    """green / red from the latest acceptance check round, else unknown."""
    result = "unknown"
    for node_id in ("acceptance", FIX_BUILD_NODE, "dod"):
        found = state.peek(node_id)
        if found is None or not found.get("started"):
            continue
        if node_id == FIX_BUILD_NODE:
            result = "green" if found.get("outcome") == "pass" else "red"
        elif found.get("checks") is not None:
            passed = all(c.get("passed") for c in found.get("checks") or [])
            result = "green" if passed else "red"
        if state.at == node_id:
            break
    return result


def track_corrections(state: EngineState) -> dict[str, Any]:
    """``gate_tracking.APPROVE_DESIGN``: none -> queued -> dispatched -> completed, per round.

    A round starts when UD-APPROVE-DESIGN is answered ``changes-requested``;
    its correction is ``dispatched`` once the correction node committed the
    intent of its call (before the call is made), ``completed`` once that node
    ended (its work returned, or it was interrupted and is not dispatched again).
    """
    data = team_data(state)
    track: dict[str, Any] = data.setdefault(
        "approve_design", {"correction_status": "none", "round": 0}
    )
    record = state.decisions.get(APPROVE_DESIGN) or {}
    answer = record.get("answer") or {}
    visit = int(record.get("visit") or 0)
    answered = record.get("status") == "answered"
    if answered and answer.get("choice") == "changes-requested" and visit != track["round"]:
        track.clear()
        track.update(
            correction_status="queued",
            round=visit,
            base={n: (f.visit if (f := state.peek(n)) is not None else 0) for n in CORRECTIONS},
        )
    if track.get("correction_status") in ("queued", "dispatched"):
        base = track.get("base") or {}
        for node_id, agent in CORRECTIONS.items():
            found = state.peek(node_id)
            if found is None or found.visit <= int(base.get(node_id, 0)):
                continue
            if found.get("outcome") is not None:
                track["correction_status"] = "completed"
            elif found.get("dispatching"):
                track["correction_status"] = "dispatched"
            else:
                continue
            track["last"] = {"agent": agent, "task_id": "meta", "at": found.get("started")}
    return track
