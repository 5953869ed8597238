"""Journal events as readable entries: what ``phasegate logs`` prints and the timeline shows.

:class:`EventReader` reads events in journal order and remembers which
backend each attempt was dispatched to, so a finished call names it too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from phasegate.verdicts.model import BLOCKING_SEVERITIES

Kind = Literal["phase", "agent", "verdict", "check", "gate", "item", "other"]

#: Events that repeat what another event already said.
_QUIET = frozenset({"checks.completed", "node.transition", "action.done"})


@dataclass(frozen=True)
class EventEntry:
    """One journal event as a person reads it."""

    event: str
    time: str
    kind: Kind
    node: str
    what: str
    role: str = ""
    backend: str = ""
    tokens: int | None = None
    cost_usd: float | None = None
    duration_s: float | None = None
    ok: bool | None = None
    issues: tuple[Mapping[str, Any], ...] = ()
    output: str = ""

    @property
    def spend(self) -> str:
        """``1234 tokens, $0.0120`` (empty when the event spent nothing)."""
        parts: list[str] = []
        if self.tokens is not None:
            parts.append(f"{self.tokens} tokens")
        if self.cost_usd:
            parts.append(f"${self.cost_usd:.4f}")
        return ", ".join(parts)


def _node_of(event: Mapping[str, Any]) -> str:
    """Where ``event`` happened: a loop item's node (``tasks[T1]/code``, so the calls of
    items running at once are told apart), else its phase or node."""
    for name in ("path", "node"):
        value = event.get(name)
        if isinstance(value, str) and "[" in value:
            return value
    key = event.get("key")
    if isinstance(key, str) and "[" in key.split("#", 1)[0]:
        return key.split("#", 1)[0]  # a call's key: tasks[T1]/code#1/1/execute/0
    return str(event.get("phase") or event.get("node") or event.get("to") or "")


def _first_line(text: object) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


@dataclass
class EventReader:
    """Turns events into :class:`EventEntry` objects, in journal order."""

    _backends: dict[str, str] = field(default_factory=dict)

    def read(self, event: Mapping[str, Any]) -> EventEntry | None:
        """The entry of ``event``, or ``None`` for an event that repeats another."""
        name = str(event.get("event", ""))
        if name in _QUIET:
            return None
        base: dict[str, Any] = {
            "event": name,
            "time": str(event.get("ts", "")),
            "node": _node_of(event),
            "role": str(event.get("role") or ""),
        }
        handler = getattr(self, "_" + name.replace(".", "_"), None)
        if handler is not None:
            try:
                made: EventEntry = handler(event, base)
                made.spend  # noqa: B018 (fails here, not when the entry is shown)
            except (TypeError, ValueError, AttributeError, KeyError):
                # A journal edited by hand: the odd event is shown as such, the rest as ever.
                what = f"{_generic(event)} (a field of it holds a value of an unexpected type)"
                return EventEntry(kind="other", what=what, **base)
            return made
        return EventEntry(kind="other", what=_generic(event), **base)

    # -- agents ---------------------------------------------------------------

    def _agent_dispatched(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        backend = str(e.get("backend") or "")
        self._backends[str(e.get("attempt"))] = backend
        what = f"dispatched (iteration {e.get('iteration')}, {e.get('stage') or 'call'})"
        return EventEntry(kind="agent", what=what, backend=backend, **base)

    def _agent_finished(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        usage = e.get("usage") or {}
        tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        duration = float(e.get("duration_s") or 0.0)
        ok = bool(e.get("ok"))
        what = (
            f"finished in {duration:.1f}s"
            if ok
            else f"failed after {duration:.1f}s: {_first_line(e.get('error'))}"
        )
        # Notes phasegate added to the CLI's stderr (e.g. tool calls its permissions denied).
        notes = [
            line.removeprefix(NOTE_PREFIX)
            for line in str(e.get("stderr") or "").splitlines()
            if line.startswith(NOTE_PREFIX)
        ]
        if notes:
            what += "; " + "; ".join(notes)
        return EventEntry(
            kind="agent",
            what=what,
            backend=self._backends.get(str(e.get("attempt")), ""),
            tokens=tokens,
            cost_usd=e.get("cost_usd"),
            duration_s=duration,
            ok=ok,
            **base,
        )

    def _agent_failed(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"attempt {e.get('tries')}/{e.get('of')} failed: {_first_line(e.get('error'))}"
        backend = self._backends.get(str(e.get("attempt")), "")
        return EventEntry(kind="agent", what=what, backend=backend, ok=False, **base)

    def _agent_recovered(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"recorded result {e.get('attempt')} reused; not dispatched again"
        if e.get("reason"):  # a result read back from what the interrupted call left
            what = f"call {e.get('attempt')} not dispatched again: {e.get('reason')}"
        return EventEntry(kind="agent", what=what, **base)

    def _agent_abandoned(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        return EventEntry(kind="agent", what=abandoned_call(e), **base)

    # -- reviews and checks ---------------------------------------------------------

    def _review_verdict(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        issues = tuple(i for i in e.get("issues") or e.get("findings") or [] if isinstance(i, dict))
        summary = _first_line(e.get("summary"))
        if "approved" in e:
            approved = bool(e.get("approved"))
            if approved:
                verdict = "approved"
            elif e.get("source") == "checks":
                verdict = "not approved (checks failed)"
            elif e.get("unclear"):
                verdict = "not approved (unclear answer)"
            else:
                blockers = sum(
                    1 for i in issues if str(i.get("severity", "")).lower() in BLOCKING_SEVERITIES
                )
                verdict = f"not approved ({blockers} blocker(s))"
        else:  # workflows whose reviewers answer with a verdict word
            verdict = str(e.get("verdict") or "verdict")
            approved = verdict.lower() in ("approved", "pass", "passed")
        what = f"iteration {e.get('iteration')}: {verdict}" + (f": {summary}" if summary else "")
        return EventEntry(kind="verdict", what=what, ok=approved, issues=issues, **base)

    _challenge_verdict = _review_verdict

    def _check_started(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"check {e.get('check')} started: {_clipped(_first_line(e.get('command')))}"
        return EventEntry(kind="check", what=what, **base)

    def _check_reused(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"check {e.get('check')}: recorded result reused; not run again"
        return EventEntry(kind="check", what=what, ok=bool(e.get("passed")), **base)

    def _check_finished(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        if e.get("skipped"):
            what, ok = f"check {e.get('check')} skipped (no command configured)", True
        elif e.get("passed"):
            what, ok = f"check {e.get('check')} passed", True
        elif e.get("timed_out"):
            from phasegate.engine.checks import timed_out_text

            what, ok = f"check {e.get('check')} {timed_out_text(e.get('timeout_s'))}", False
        elif e.get("error"):  # it could not run (a cwd folder missing, no command configured)
            what, ok = f"check {e.get('check')} could not run: {_first_line(e.get('error'))}", False
        else:
            from phasegate.engine.checks import EXIT_HINTS

            code = e.get("exit_code")
            hint = f": {EXIT_HINTS[code][0]}" if code in EXIT_HINTS else ""
            what, ok = f"check {e.get('check')} failed (exit {code}{hint})", False
        return EventEntry(
            kind="check",
            what=what,
            ok=ok,
            duration_s=e.get("duration_s"),
            output=str(e.get("output") or ""),
            **base,
        )

    # -- phases, gates, the item --------------------------------------------------------

    def _node_started(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        kind = e.get("kind", "agent")
        if kind == "agent":
            what = (
                f"started (mode {e.get('mode')}, up to {e.get('max_iterations')} review "
                "iterations" + (", review skipped)" if e.get("no_review") else ")")
            )
        else:
            what = f"{kind} {e.get('node')} started"
        return EventEntry(kind="phase", what=what, **base)

    def _phase_completed(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        n = e.get("iterations")
        review = e.get("review")
        what = f"completed after {n} iteration{'s' if n != 1 else ''}" + (
            f" ({review})" if review else ""
        )
        notes = tuple(
            {"severity": "", "description": str(note)} for note in e.get("reviewer_notes") or []
        )
        return EventEntry(kind="phase", what=what, ok=review != "concerns", issues=notes, **base)

    def _label_changed(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"phase {e.get('from_label')} → {e.get('to')} ({e.get('cause')})"
        return EventEntry(kind="phase", what=what, **base)

    def _node_blocked(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        return EventEntry(kind="phase", what=f"blocked: {e.get('message')}", ok=False, **base)

    def _foreach_item(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        title = f": {e.get('title')}" if e.get("title") else ""
        what = f"item {e.get('key')} {e.get('status')}{title}"
        return EventEntry(kind="phase", what=what, ok=e.get("status") != "failed", **base)

    def _fanout_started(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        where = " in git worktrees" if e.get("isolation") == "worktree" else ""
        what = f"up to {e.get('jobs')} items at once{where} ({len(e.get('items') or [])} to go)"
        return EventEntry(kind="phase", what=what, **base)

    def _fanout_finished(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        outcome = e.get("outcome")
        return EventEntry(
            kind="phase", what=f"parallel items ended: {outcome}", ok=outcome == "done", **base
        )

    def _fanout_landed(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"merged work put into the work tree ({str(e.get('merged'))[:12]})"
        return EventEntry(kind="phase", what=what, ok=True, **base)

    def _foreach_merged(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"item {e.get('key')} merged ({str(e.get('commit'))[:12]})"
        return EventEntry(kind="phase", what=what, ok=True, **base)

    def _foreach_conflict(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        files = ", ".join(str(f) for f in e.get("files") or [])
        what = f"item {e.get('key')}: merge conflict in {files}"
        return EventEntry(kind="phase", what=what, ok=False, **base)

    def _foreach_conflict_resolved(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"item {e.get('key')}: merge conflict resolved ({str(e.get('commit'))[:12]})"
        return EventEntry(kind="phase", what=what, ok=True, **base)

    def _decision_answered(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"decision {e.get('id')} answered: {e.get('choice')} (by {e.get('by')})"
        if e.get("note"):
            what += f": {_first_line(e.get('note'))}"
        return EventEntry(kind="gate", what=what, **base)

    def _transition(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"transition {e.get('from_phase') or 'start'} → {e.get('to')}"
        if e.get("type") == "warning":
            what += f" (warning: {e.get('message')})"
        return EventEntry(kind="phase", what=what, **base)

    def _transition_blocked(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        return EventEntry(kind="phase", what=f"blocked: {e.get('message')}", ok=False, **base)

    def _decision_needed(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"waiting on a decision ({e.get('id')}): {_first_line(e.get('question'))}"
        return EventEntry(kind="gate", what=what, **base)

    def _decision_invalid(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        # As the prompt said it when the answer was typed.
        what = f"answer refused: {_first_line(e.get('reason'))}"
        return EventEntry(kind="gate", what=what, ok=False, **base)

    def _decision(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"decision {e.get('id')}: {e.get('answer')} (by {e.get('by')})"
        if e.get("note"):
            what += f": {_first_line(e.get('note'))}"
        return EventEntry(kind="gate", what=what, **base)

    def _budget_raised(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"budget: {e.get('text') or e.get('cap')} for this item"
        return EventEntry(kind="gate", what=what, **base)

    def _budget_stopped(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"stopped by the budget cap {e.get('cap')} before calling an agent"
        return EventEntry(kind="gate", what=what, ok=False, **base)

    def _budget_unmeasured(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        return EventEntry(kind="gate", what=f"warning: {_first_line(e.get('text'))}", **base)

    def _item_created(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        what = f"created (workflow {e.get('workflow')}, mode {e.get('mode')})"
        return EventEntry(kind="item", what=what, **base)

    def _item_completed(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        return EventEntry(kind="item", what=f"complete: {e.get('summary')}", ok=True, **base)

    def _worktree_finish(self, e: Mapping[str, Any], base: dict[str, Any]) -> EventEntry:
        """What became of a finished item's worktree: removed, or kept and why."""
        return EventEntry(kind="item", what=f"worktree: {e.get('message')}", **base)


#: How phasegate's own notes in an agent's stderr begin.
NOTE_PREFIX = "[phasegate] "


def _generic(event: Mapping[str, Any]) -> str:
    """``name: key=value, ...`` for events without a reading of their own."""
    skip = {"ts", "event", "item", "phase", "role", "text", "structured", "stderr"}
    fields = [
        # A flag or a number as JSON writes it (``removed=false``, ``count=0``), never empty.
        f"{k}={_clipped(_first_line(v)) if isinstance(v, str) else json.dumps(v)}"
        for k, v in event.items()
        if k not in skip and isinstance(v, str | int | float | bool) and v not in ("", None)
    ]
    return str(event.get("event")) + (": " + ", ".join(fields[:6]) if fields else "")


def _clipped(text: str, most: int = 80) -> str:
    """``text`` cut at a word to at most ``most`` characters, an ellipsis saying so."""
    if len(text) <= most:
        return text
    cut = text[: most - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return (cut or text[: most - 1]) + "…"


#: The reason an ``agent.abandoned`` event gives when phasegate itself was stopped.
STOPPED = "phasegate was stopped"


def abandoned_call(e: Mapping[str, Any]) -> str:
    """What an ``agent.abandoned`` event means: journaled when phasegate is stopped during
    a call (the next run dispatches it again), and by the run that then does so."""
    call = f"call {e.get('attempt')}" if e.get("attempt") else f"{e.get('role')}'s call"
    if e.get("reason") == STOPPED:
        return f"{call} was stopped with phasegate; the next run dispatches it again"
    return f"{call} was interrupted; dispatching it again"
