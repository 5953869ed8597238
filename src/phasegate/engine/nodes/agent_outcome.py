"""How an agent node's verdict ends an iteration: pass on, revise with feedback, or end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phasegate.engine.prompting import READABLE, SAID, UNREADABLE
from phasegate.state.journal import utc_now
from phasegate.verdicts.model import Verdict
from phasegate.workflow.model import AgentNode
from phasegate.workflow.parts import COMPLETE, PASS, REVISE

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Outcome


def conclude(
    run: Run,
    path: str,
    node: AgentNode,
    verdict: Verdict,
    action: str,
    reviewer: str,
    index: int,
    *,
    final: bool = False,
    role: str | None = None,
) -> Outcome | None:
    """Record the iteration; then pass on, loop with feedback, or end the node."""
    from phasegate.engine.walk import Outcome

    ns = run.state.node(path)
    issues = [i.model_dump() for i in verdict.issues]
    approved = action == PASS
    if not approved and not issues and verdict.summary.strip():
        # A rejection that names no issue still says why: its summary is the feedback
        # (and the concern kept when the budget is spent), whatever reader read it.
        issues = [{"severity": "blocker", "description": verdict.summary.strip(), "location": None}]
    cause = f"{reviewer} {ns.iteration} {verdict.word}"
    record = {
        "phase": run.label(path),
        "iteration": ns.iteration,
        "timestamp": utc_now(),
        "approved": approved,
        "unclear": verdict.unclear,
        "source": verdict.source,
        "word": verdict.word,
        "reviewer": reviewer,
        "summary": verdict.summary,
        "issues": issues,
        "changes": ns.get("changes", ""),
    }
    ns.records("iterations").append(record)
    run.item.record(
        "review.verdict",
        node=path,
        phase=run.label(path),
        iteration=ns.iteration,
        reviewer=reviewer,
        role=role,
        verdict=verdict.word,
        approved=approved,
        unclear=verdict.unclear,
        source=verdict.source,
        summary=verdict.summary,
        issues=issues,
    )
    if action == PASS:
        ns.stage = f"review:{index + 1}"
        ns["resume_review"] = 0
        run.save(lazy=True)
        return None
    notes = _notes(issues)
    if action == REVISE:
        used = ns.mapping("used")
        count = ns.iteration if node.budget.per == "node" else int(used.get(reviewer, 0)) + 1
        if count < run.limit(path, node) and not final:
            used[reviewer] = int(used.get(reviewer, 0)) + 1
            ns.iteration = ns.iteration + 1
            ns.stage = "execute"
            if verdict.unclear:
                feedback = unclear_feedback(
                    ns.records("iterations"), reviewer, verdict.summary, issues
                )
            else:
                feedback = issues or [
                    {"severity": "blocker", "description": verdict.word, "location": None}
                ]
            ns["feedback"] = feedback
            ns["resume_review"] = max(index, 0)
            ns["changes"] = ""
            run.save(lazy=True)
            return None
        if verdict.source == "checks":
            # Checks still failing when the budget is spent: the node did not pass (by
            # default the run stops, blocked; a workflow may map the outcome elsewhere).
            complete(run, path, "checks-failed", notes, verdict.summary, announce=False)
            return Outcome("checks-failed", issues=issues, cause=cause)
        complete(run, path, "concerns", notes, verdict.summary)
        policy = node.budget.on_exhausted
        run.item.record(
            "node.budget_spent",
            node=path,
            reviewer=reviewer,
            iterations=ns.iteration,
            policy=policy,
        )
        return Outcome(PASS if policy == COMPLETE else policy, issues=issues, cause=cause)
    complete(run, path, "concerns", notes, verdict.summary)
    return Outcome(action, issues=issues, cause=cause)


def unclear_feedback(
    records: list[dict[str, Any]], reviewer: str, reason: str, issues: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The executor's feedback after ``reviewer``'s answer could not be read (``reason``):
    a note saying so, never an issue to address (the executor cannot mend the reviewer's
    answer); the issues of that reviewer's last review that could be read, if it did not
    approve; and what the reviewer wrote in the answer that could not be read."""
    note = {"severity": "note", "description": reason, "location": None, "kind": UNREADABLE}
    readable = [{**i, "kind": READABLE} for i in readable_issues(records, reviewer)]
    said = [{**i, "kind": SAID} for i in reviewer_words(issues, reason)]
    return [note, *readable, *said]


def readable_issues(records: list[dict[str, Any]], reviewer: str) -> list[dict[str, Any]]:
    """The issues of ``reviewer``'s last review that could be read, unless it approved."""
    for record in reversed(records):
        if record.get("reviewer") != reviewer or record.get("unclear"):
            continue
        return [] if record.get("approved") else list(record.get("issues") or [])
    return []


def reviewer_words(issues: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """The issues of an unclear verdict that hold the reviewer's own words: an issue that
    is only the reader's ``reason`` is left out, and a reason heading the reviewer's words
    (``The reviewer said: ...`` on the next line) is cut off them."""
    kept: list[dict[str, Any]] = []
    for issue in issues:
        text = str(issue.get("description") or "")
        if text.strip() == reason.strip():
            continue
        head, _, rest = text.partition("\n")
        if head.strip() == reason.strip() and rest.strip():
            issue = {**issue, "description": rest.strip()}
        kept.append(issue)
    return kept


def _notes(issues: list[dict[str, Any]]) -> list[str]:
    def note(issue: dict[str, Any]) -> str:
        where = f" (at {issue['location']})" if issue.get("location") else ""
        return f"[{issue['severity']}] {issue['description']}{where}"

    serious = [note(i) for i in issues if i.get("severity") != "note"]
    return serious or [note(i) for i in issues]


def complete(
    run: Run,
    path: str,
    review: str,
    notes: list[str],
    summary: str,
    *,
    announce: bool = True,
) -> None:
    """Mark the node done with its review (``approved``, ``concerns``...) and notes."""
    ns = run.state.node(path)
    ns["review"] = review
    ns["notes"] = notes
    ns["summary"] = summary or None
    verified = {"approved": True, "concerns": False, "checks-failed": False}
    ns["verified"] = verified.get(review)
    ns.stage = "done"
    if not announce:
        return
    run.item.record(
        "phase.completed",
        node=path,
        phase=run.label(path),
        iterations=ns.iteration,
        review=review,
        reviewer_notes=notes,
    )
