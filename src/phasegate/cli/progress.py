"""Turn journal events into progress lines on stderr while a run goes on.

Events come from the engine's thread and, during a parallel foreach, from
the worker threads whose agents finish: printing is serialised. While items
run in parallel, a terminal shows a live table with one line per running
item; without a terminal every line names its item (``[T3] ...``).
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from phasegate.cli.output import OutputClosed
from phasegate.cli.views import _first_line as first_line
from phasegate.interrupts import stopped_by

if TYPE_CHECKING:
    from rich.live import Live  # shown on a terminal only: imported there
    from rich.status import Status

_ITEM = re.compile(r"\[([^\]]+)\]")


def _item_of(event: dict[str, Any]) -> str | None:
    """The foreach item an event belongs to (``tasks[T3]/code`` -> ``T3``), if any."""
    for field in ("path", "node", "key"):
        found = _ITEM.search(str(event.get(field) or ""))
        if found:
            return found.group(1)
    return None


def _plural(n: Any, word: str) -> str:
    """``1 iteration``, ``2 iterations``: ``n`` and ``word``, in the plural unless ``n`` is 1."""
    return f"{n} {word}{'' if n == 1 else 's'}"


#: The outcomes that mean a node (or a foreach) went on as it should.
_ONWARD = frozenset({"pass", "done"})

#: How a parser's rule put a foreach's items in order, in words.
_RULES = {
    "document": "in the order the file lists them",
    "plan": "in the plan's order",
    "frontmatter": "in the order the frontmatter lists them",
    "layers": "layer by layer (data, logic, integration, testing)",
}


#: How many lines of a failing check's output are shown when it blocks a run.
BLOCKED_OUTPUT_LINES = 30

#: How many characters of a reviewer's issue a progress line shows (the review history
#: keeps it whole).
ISSUE_CHARS = 300


def _clipped(text: str, limit: int = ISSUE_CHARS) -> str:
    """``text``'s first line on one line, cut to ``limit`` characters (``…`` marks a cut)."""
    flat = " ".join(first_line(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class ProgressPrinter:
    """An event sink for :class:`~phasegate.engine.item.WorkItem` that prints progress.

    With a terminal, an agent call shows a spinner until it returns; without
    one, each event is one plain line (safe for CI logs).
    """

    def __init__(self, console: Console, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self._status: Status | None = None
        self._who = ""
        self._confirmed = False
        self._lock = threading.RLock()
        #: While a parallel foreach runs: what each running item does, and since when.
        self._rows: dict[str, tuple[str, float]] | None = None
        self._live: Live | None = None
        self._current: dict[str, Any] | None = None
        #: The reader of the progress lines went away: the run stops.
        self.output_closed = False
        self._stopped = False
        #: Rewrites the commands a line suggests (to name the item's workflow).
        self.commands: Callable[[str], str] | None = None
        #: A node's phase.completed, shown once its outcome is known (node.transition).
        self._held: dict[str, dict[str, Any]] = {}
        #: The foreach nodes seen in this run: their label and how many items they read.
        self._loops: dict[str, dict[str, Any]] = {}
        #: The foreach item of each call dispatched for one (its finish names no item).
        self._attempts: dict[str, str] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        if self.output_closed:
            self._stop_for_closed_output()
            return
        name = str(event.get("event", ""))
        # A person at the prompt hears why an answer was refused; a warning is always said.
        warnings = (
            "decision.invalid",
            "budget.unmeasured",
            "gate.timeout_unset",
            "review.timeout_unset",
        )
        if self.quiet and name not in warnings:
            return
        handler = getattr(self, "_on_" + name.replace(".", "_"), None)
        if handler is not None:
            try:
                with self._lock:
                    self._current = event
                    handler(event)
            except (OutputClosed, BrokenPipeError):
                # `phasegate run 2>&1 | head`: the run stops as a SIGPIPE would stop it
                # (exit 141), in the engine's thread, where a stop signal is raised too.
                self.output_closed = True
                self._stop_for_closed_output()

    def _stop_for_closed_output(self) -> None:
        if self._stopped or threading.current_thread() is not threading.main_thread():
            return  # a worker thread: the engine's thread stops at its next event
        self._stopped = True
        raise stopped_by(signal.SIGPIPE)

    @property
    def live(self) -> bool:
        """Whether a spinner may be drawn: a real terminal, not one forced by --color always."""
        try:
            return self.console.is_terminal and self.console.file.isatty()
        except (AttributeError, ValueError):
            return False

    def close(self) -> None:
        with self._lock:
            for path in list(self._held):  # the run ended before the node's outcome was known
                self._show_completed(self._held.pop(path), None)
            self._stop_drawing()

    def _stop_drawing(self) -> None:
        with self._lock:
            if self._status is not None:
                self._status.stop()
                self._status = None
            if self._live is not None:
                self._live.stop()
                self._live = None
            self._rows = None

    def _line(self, text: str, event: dict[str, Any] | None = None) -> None:
        event = event if event is not None else self._current
        key = self._item(event) if event is not None and self._rows is not None else None
        if key is not None and not self._live:
            text = f"[{escape(key)}] " + text.lstrip()
        if self.commands is not None:
            text = self.commands(text)
        self.console.print(text, highlight=False)

    def _item(self, event: dict[str, Any]) -> str | None:
        """The foreach item ``event`` belongs to, also for a call whose key names none
        (a merge conflict's repair): the item its dispatch named."""
        return _item_of(event) or self._attempts.get(str(event.get("attempt")))

    # -- a parallel foreach --------------------------------------------------------------

    def _table(self) -> Table:
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
        table.add_column("item")
        table.add_column("doing")
        table.add_column("for", justify="right")
        now = time.monotonic()
        for key, (what, since) in sorted((self._rows or {}).items()):
            table.add_row(escape(key), escape(what), f"{now - since:.0f}s")
        return table

    def __rich__(self) -> Table:
        """The live table, drawn anew at each refresh (so the times go on)."""
        with self._lock:
            return self._table()

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.refresh()

    def _row(self, key: str | None, what: str) -> None:
        if self._rows is None or key is None:
            return
        self._rows[key] = (what, time.monotonic())
        self._refresh()

    def _on_fanout_started(self, e: dict[str, Any]) -> None:
        items = e.get("items") or []
        self._line(
            f"  running up to {e.get('jobs')} item(s) at once"
            + (" in git worktrees" if e.get("isolation") == "worktree" else "")
            + f" ({len(items)} to go)"
        )
        self._rows = {}
        if self.live:
            self.close_spinner()
            self._rows = {}
            from rich.live import Live

            self._live = Live(self, console=self.console, refresh_per_second=2, transient=True)
            self._live.start()

    def close_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _on_fanout_finished(self, e: dict[str, Any]) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        self._rows = None
        outcome = e.get("outcome")
        if outcome and outcome != "done":
            self._line(f"[yellow]  parallel items ended: {escape(str(outcome))}[/]")

    def _on_fanout_landed(self, e: dict[str, Any]) -> None:
        self._line("  the merged work of the parallel items is in the work tree")

    def _on_foreach_merged(self, e: dict[str, Any]) -> None:
        self._line(f"  merged {escape(str(e.get('key')))}")

    def _on_foreach_conflict(self, e: dict[str, Any]) -> None:
        files = ", ".join(str(f) for f in e.get("files") or [])
        self._line(
            f"[yellow]  ! {escape(str(e.get('key')))}: merge conflict in {escape(files)} "
            f"(worktree {escape(str(e.get('worktree')))})[/]"
        )

    def _on_transition(self, e: dict[str, Any]) -> None:
        if e.get("type") == "warning" and not self._confirmed:
            self._line(f"[yellow]! {escape(str(e.get('message')))}[/]")
        self._confirmed = False

    def _on_node_started(self, e: dict[str, Any]) -> None:
        kind = e.get("kind")  # none in a journal written before run --phase gave it
        where = str(e.get("node", ""))
        inner = "/" in where
        label = escape(str(e.get("phase") or where))
        if kind == "foreach":
            self._loop(where)["label"] = str(e.get("phase") or where)
        if kind in ("agent", None):
            extra = ", review skipped" if e.get("no_review") else ""
            shown = where.rsplit("/", 1)[-1]
            node = f" {escape(where)}" if inner or shown != e.get("phase") else ""
            # Without a kind (an older journal's run --phase) it may be a check or an
            # action: no review iterations are promised for it.
            limit = e.get("max_iterations") if kind == "agent" and not extra else None
            reviews = f": up to {_plural(limit, 'review iteration')}" if limit else ""
            self._line(f"[bold]▶ {label}[/]{node} (mode {e.get('mode')}{reviews}{extra})")
        elif kind in ("check", "action", "foreach"):
            self._line(f"[bold]▶ {label}[/] ({kind} {escape(where)})")

    def _on_node_extended(self, e: dict[str, Any]) -> None:
        # A gate's answer gave the node's loop more rounds: its header's budget grew.
        limit = e.get("limit")
        if not limit:
            return
        where = str(e.get("node", ""))
        label = escape(str(e.get("phase") or where))
        node = f" {escape(where)}" if where != e.get("phase") else ""
        more = _plural(e.get("extra"), "more review iteration")
        self._line(f"[bold]▶ {label}[/]{node} ({more}: up to {_plural(limit, 'review iteration')})")

    def _loop(self, path: str) -> dict[str, Any]:
        """What is known of the foreach at ``path`` (its label, its items)."""
        return self._loops.setdefault(path, {})

    def _on_foreach_items(self, e: dict[str, Any]) -> None:
        items = e.get("items") or []
        self._loop(str(e.get("node") or ""))["items"] = len(items)
        rule = str(e.get("rule") or "")
        if e.get("order") == "deps":
            how = ", each after the items it depends on"
        elif rule:
            how = ", " + _RULES.get(rule, f"in {rule} order")
        else:
            how = ""
        self._line(f"  {_plural(len(items), 'item')} to go through{escape(how)}")

    def _on_foreach_item(self, e: dict[str, Any]) -> None:
        self._loop(str(e.get("node") or ""))
        status = e.get("status")
        key = str(e.get("key"))
        title = f": {escape(str(e.get('title')))}" if e.get("title") else ""
        if status == "running":
            self._line(f"  [bold]• {escape(key)}[/]{title}")
            self._row(key, "starting")
            return
        if self._rows is not None:
            self._rows.pop(key, None)
            self._refresh()
        if status == "skipped":
            self._line(f"  - {escape(key)} skipped ({e.get('reason')})")
        elif status == "done" and self._rows is not None:
            self._line(f"  [green]✔ {escape(key)} done[/]")
        elif status == "parked":
            self._line(f"[yellow]  ■ {escape(key)} stopped: {escape(str(e.get('reason')))}[/]")
        elif status not in ("done", None):
            self._line(f"[yellow]  ■ {escape(key)} ended: {escape(str(status))}[/]")

    def _on_decision_needed(self, e: dict[str, Any]) -> None:
        self._line(f"[yellow]? {escape(str(e.get('id')))}: {escape(str(e.get('question')))}[/]")

    def _on_decision_invalid(self, e: dict[str, Any]) -> None:
        # An answer typed at the prompt and refused: say why before it is asked again.
        self._line(f"[yellow]  answer refused: {escape(str(e.get('reason')))}[/]")

    def _on_decision_waiting(self, e: dict[str, Any]) -> None:
        self._line(f"  waiting for an answer: {escape(str(e.get('command')))}")

    def _on_node_blocked(self, e: dict[str, Any]) -> None:
        held = self._held.pop(str(e.get("node") or ""), None)
        if held is not None:
            self._show_completed(held, str(e.get("outcome") or "") or None)
        self._line(f"[red]■ {escape(str(e.get('message')))}[/]")
        for output in e.get("output") or []:
            lines = str(output).splitlines()
            if len(lines) > BLOCKED_OUTPUT_LINES:
                self._line(f"    [... {len(lines) - BLOCKED_OUTPUT_LINES} more lines above]")
            for line in lines[-BLOCKED_OUTPUT_LINES:]:
                self._line(f"    {escape(line)}")

    def _on_reviewer_selected(self, e: dict[str, Any]) -> None:
        self._line(f"  reviewer: {escape(str(e.get('role')))} ({escape(str(e.get('reason')))})")

    def _on_agent_dispatched(self, e: dict[str, Any]) -> None:
        item = _item_of(e)
        if item is not None and e.get("attempt"):
            self._attempts[str(e.get("attempt"))] = item
        self._who = f"  iteration {e.get('iteration')}: {e.get('role')} ({e.get('backend')})"
        label = f"{self._who} working on {e.get('phase')}…"
        if e.get("stage") == "repair":  # a parallel item's merge conflict, not its work
            self._who = f"  repair {e.get('iteration')}: {e.get('role')} ({e.get('backend')})"
            label = f"{self._who} resolving the merge conflict of {item}…"
        if self._rows is not None:
            where = str(e.get("path") or "").rsplit("/", 1)[-1]
            self._row(_item_of(e), f"{e.get('role')} ({e.get('backend')}) on {where}")
            if self._live is None:
                self._line(escape(label), e)
            return
        if self.live:
            # A spinner while the agent works; the finished line replaces it.
            self._stop_drawing()
            self._status = self.console.status(escape(label))
            self._status.start()
        else:
            self._line(escape(label))

    def _on_agent_finished(self, e: dict[str, Any]) -> None:
        if self._rows is None:
            self.close_spinner()
        usage = e.get("usage") or {}
        tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        cost = e.get("cost_usd")
        spent = f"{tokens} tokens" + (f", ${cost:.4f}" if cost else "")
        # The error last: it is a sentence of its own, which "in 0.2s" would seem to end.
        state = "done" if e.get("ok") else "[red]failed[/]"
        # On one line: an agent's error must not print lines that look like phasegate's own.
        said = " | ".join(t.strip() for t in str(e.get("error")).splitlines() if t.strip())
        error = "" if e.get("ok") else f": [red]{escape(said)}[/]"
        who = escape(self._who) if self.live and self._rows is None else f"    {e.get('role')}"
        if self._live is not None:
            who = f"  {escape(str(self._item(e)))}: {e.get('role')}"
        took = f"{float(e.get('duration_s') or 0):.1f}s"
        self._line(f"{who} {state} in {took} ({spent}){error}", e)

    def _on_agent_violation(self, e: dict[str, Any]) -> None:
        self._stop_drawing()
        paths = ", ".join(str(p) for p in e.get("paths") or [])
        forged = len(e.get("forged_events") or [])
        removed = f"; {forged} forged journal line(s) removed" if forged else ""
        kept = [str(k) for k in e.get("kept") or []]
        if kept:  # what the workflow keeps from this role, in words
            from phasegate.engine.protect import changed_words

            what = changed_words([str(p) for p in e.get("paths") or []], kept)
            self._line(
                f"[red]  ! {escape(str(e.get('role')))} changed {escape(what)} "
                f"(put back as they were{removed})[/]"
            )
            return
        from phasegate.engine.protect import whose

        self._line(
            f"[red]  ! {escape(str(e.get('role')))} changed "
            f"{whose(str(p) for p in e.get('paths') or [])}: "
            f"{escape(paths)} (put back as they were{removed})[/]"
        )

    def _on_agent_failed(self, e: dict[str, Any]) -> None:
        asked = e.get("retry_after")
        then = ""
        if isinstance(asked, int | float) and e.get("retry"):
            then = f"; next attempt in {asked:g}s, as the server asked (Retry-After)"
        elif isinstance(asked, int | float):
            then = (
                f"; not tried again: the server asked to wait {asked:g}s, past the "
                f"{float(e.get('limit') or 0):g}s limit"
            )
        self._line(
            f"[yellow]    attempt {e.get('tries')}/{e.get('of')} of {e.get('role')} failed{then}[/]"
        )

    def _on_agent_recovered(self, e: dict[str, Any]) -> None:
        self._line(
            f"  ↺ {e.get('role')}'s recorded result ({e.get('attempt')}) reused; "
            "not dispatched again"
        )

    def _on_agent_abandoned(self, e: dict[str, Any]) -> None:
        from phasegate.dashboard.events import abandoned_call

        self._line(f"  ↺ {escape(abandoned_call(e))}")

    def _on_check_started(self, e: dict[str, Any]) -> None:
        # A test suite can run for minutes: the line says what runs meanwhile.
        lines = str(e.get("command") or "").strip().splitlines() or [""]
        command = lines[0] + (" …" if len(lines) > 1 else "")
        text = f"  running check {escape(str(e.get('check')))}: {escape(command)}"
        if self._rows is not None:
            self._row(_item_of(e), f"check {e.get('check')}")
            if self._live is None:
                self._line(text, e)
            return
        self._line(text)

    def _on_check_reused(self, e: dict[str, Any]) -> None:
        passed = "skipped" if e.get("skipped") else "passed" if e.get("passed") else "failed"
        self._line(
            f"  ↺ check {escape(str(e.get('check')))}'s recorded result ({passed}) reused; "
            "not run again"
        )

    def _on_check_finished(self, e: dict[str, Any]) -> None:
        if e.get("skipped"):
            self._line(f"  - check {e.get('check')} skipped (no command configured)")
        elif e.get("passed"):
            self._line(f"  [green]✓[/] check {e.get('check')} passed")
        elif e.get("error"):  # it could not run (a cwd folder missing, no command configured)
            self._line(f"  [red]✗[/] check {e.get('check')} failed: {escape(str(e.get('error')))}")
        elif e.get("timed_out"):
            from phasegate.engine.checks import timed_out_text

            why = timed_out_text(e.get("timeout_s"))
            self._line(f"  [red]✗[/] check {e.get('check')} {why}")
        else:
            from phasegate.engine.checks import EXIT_HINTS

            code = e.get("exit_code")
            hint = f": {EXIT_HINTS[code][0]}" if code in EXIT_HINTS else ""
            self._line(f"  [red]✗[/] check {e.get('check')} failed (exit {code}{hint})")

    def _on_review_verdict(self, e: dict[str, Any]) -> None:
        from phasegate.verdicts.model import BLOCKING_SEVERITIES

        issues = e.get("issues") or []
        blockers = [i for i in issues if str(i.get("severity", "")).lower() in BLOCKING_SEVERITIES]
        if e.get("approved"):
            self._line(f"  [green]✓ iteration {e.get('iteration')}: approved[/]")
            return
        # "N blocker(s)" where the reviewer rates issues blocker/warning/note; else counted
        # as it rated them: "1 issue(s): 1 medium" (high/medium/low).
        rated = [str(i.get("severity") or "unrated").lower() for i in issues]
        why = (
            "unclear answer"
            if e.get("unclear")
            else f"{len(blockers)} blocker(s)"
            if "blocker" in rated or not rated
            else f"{len(rated)} issue(s): "
            + ", ".join(f"{rated.count(s)} {s}" for s in dict.fromkeys(rated))
        )
        if e.get("source") == "checks":
            why = "checks failed"
        self._line(f"  [red]✗ iteration {e.get('iteration')}: not approved ({why})[/]")
        for issue in issues[:5]:
            # A failing check's first line only introduces its output: shown with the next.
            first = _clipped(str(issue.get("description") or ""))
            severity = escape(f"[{issue.get('severity')}]")
            self._line(f"      - {severity} {escape(first)}")

    def _on_phase_completed(self, e: dict[str, Any]) -> None:
        # Whether the node went on or ended with another outcome (a reviewer's `rejected`
        # mapped to a gate) is known at its node.transition (or node.blocked), next.
        path = str(e.get("node") or "")
        if "[" in path:
            self._loop(path[: path.rindex("[")]).setdefault("label", str(e.get("phase") or ""))
        self._held[path] = e

    def _on_node_transition(self, e: dict[str, Any]) -> None:
        path = str(e.get("node") or "")
        outcome = str(e.get("outcome") or "") or None
        held = self._held.pop(path, None)
        if held is not None:
            self._show_completed(held, outcome)
        elif path in self._loops:
            self._show_loop_end(path, outcome)

    def _subject(self, e: dict[str, Any]) -> str:
        """What a completion line names: the phase, or for a foreach body's node the node
        and its item (``T1: build``); the item is left out where the line's prefix has it."""
        path = str(e.get("node") or "")
        if "[" not in path:
            return escape(str(e.get("phase") or path))
        key = _ITEM.findall(path)[-1]
        node = path.rsplit("/", 1)[-1]
        prefixed = self._rows is not None and not self._live and _item_of(e) == key
        return escape(node if prefixed else f"{key}: {node}")

    def _show_completed(self, e: dict[str, Any], outcome: str | None) -> None:
        """A node's end: ✔ when it went on (or its outcome is unknown), ✗ with its outcome."""
        # Run with --no-review: no iteration was reviewed, as status shows `-`.
        skipped = e.get("review") == "skipped"
        spent = "no review" if skipped else _plural(e.get("iterations"), "iteration")
        subject = self._subject(e)
        notes = (e.get("reviewer_notes") or []) if e.get("review") == "concerns" else []
        if outcome is not None and outcome not in _ONWARD:
            head = f"✗ {subject} ended {escape(outcome)} ({spent})"
            self._line(f"[yellow]{head}{'. Reviewer concerns:' if notes else ''}[/]", e)
        elif e.get("review") == "concerns":
            self._line(f"[yellow]✔ {subject} complete ({spent}). Reviewer concerns:[/]", e)
        else:
            self._line(f"[green]✔ {subject} complete ({spent})[/]", e)
        for note in notes:
            self._line(f"[yellow]      - {escape(_clipped(str(note)))}[/]", e)

    def _show_loop_end(self, path: str, outcome: str | None) -> None:
        """A foreach's end, once for the whole loop."""
        loop = self._loops.pop(path)
        label = escape(str(loop.get("label") or path))
        if outcome is not None and outcome not in _ONWARD:
            self._line(f"[yellow]■ {label} ended {escape(outcome)}[/]")
            return
        count = f" ({_plural(loop['items'], 'item')})" if "items" in loop else ""
        self._line(f"[green]✔ {label} complete{count}[/]")

    def _on_decision(self, e: dict[str, Any]) -> None:
        # A warning the person just confirmed at the prompt need not be repeated.
        self._confirmed = e.get("id") == "transition-warning" and e.get("by") == "prompt"
        self._line(f"  ? {e.get('id')}: {e.get('answer')} (by {e.get('by')})")

    def _on_budget_unmeasured(self, e: dict[str, Any]) -> None:
        self._line(f"[yellow]phasegate: warning: {escape(str(e.get('text')))}[/]")

    def _on_gate_timeout_unset(self, e: dict[str, Any]) -> None:
        self._line(f"[yellow]phasegate: warning: {escape(str(e.get('message')))}[/]")

    _on_review_timeout_unset = _on_gate_timeout_unset

    def _on_budget_raised(self, e: dict[str, Any]) -> None:
        self._line(f"  budget: {escape(str(e.get('text')))}")

    def _on_item_completed(self, e: dict[str, Any]) -> None:
        summary = escape(str(e.get("summary")))
        if e.get("status") == "stopped":  # an end node with status: stopped
            # Its message ends the run's closing message, printed after this line.
            self._line(f"[yellow]■ {e.get('item')} stopped:[/] {summary}")
            return
        if e.get("message"):  # the end node's message, added to the closing line
            summary = f"{summary} {escape(str(e.get('message')))}"
        self._line(f"[bold green]★ {e.get('item')} complete:[/] {summary}")

    def _on_worktree_finish(self, e: dict[str, Any]) -> None:
        self._line(f"  worktree: {escape(str(e.get('message')))}")
