"""Turn journal events into progress lines on stderr while a run goes on."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status

#: How many lines of a failing check's output are shown when it blocks a run.
BLOCKED_OUTPUT_LINES = 30


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

    def __call__(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        name = str(event.get("event", ""))
        handler = getattr(self, "_on_" + name.replace(".", "_"), None)
        if handler is not None:
            handler(event)

    @property
    def live(self) -> bool:
        """Whether a spinner may be drawn: a real terminal, not one forced by --color always."""
        try:
            return self.console.is_terminal and self.console.file.isatty()
        except (AttributeError, ValueError):
            return False

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _line(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def _on_transition(self, e: dict[str, Any]) -> None:
        if e.get("type") == "warning" and not self._confirmed:
            self._line(f"[yellow]! {escape(str(e.get('message')))}[/]")
        self._confirmed = False

    def _on_node_started(self, e: dict[str, Any]) -> None:
        kind = e.get("kind", "agent")
        where = str(e.get("node", ""))
        inner = "/" in where
        label = escape(str(e.get("phase") or where))
        if kind == "agent":
            extra = ", review skipped" if e.get("no_review") else ""
            shown = where.rsplit("/", 1)[-1]
            node = f" {escape(where)}" if inner or shown != e.get("phase") else ""
            self._line(
                f"[bold]▶ {label}[/]{node} (mode {e.get('mode')}: up to "
                f"{e.get('max_iterations')} review iterations{extra})"
            )
        elif kind in ("check", "action", "foreach"):
            self._line(f"[bold]▶ {label}[/] ({kind} {escape(where)})")

    def _on_foreach_items(self, e: dict[str, Any]) -> None:
        items = e.get("items") or []
        rule = f", {e.get('rule')}" if e.get("rule") else ""
        self._line(f"  {len(items)} item(s) to go through ({e.get('order')} order{rule})")

    def _on_foreach_item(self, e: dict[str, Any]) -> None:
        status = e.get("status")
        title = f": {escape(str(e.get('title')))}" if e.get("title") else ""
        if status == "running":
            self._line(f"  [bold]• {escape(str(e.get('key')))}[/]{title}")
        elif status == "skipped":
            self._line(f"  - {escape(str(e.get('key')))} skipped ({e.get('reason')})")

    def _on_decision_needed(self, e: dict[str, Any]) -> None:
        self._line(f"[yellow]? {escape(str(e.get('id')))}: {escape(str(e.get('question')))}[/]")

    def _on_decision_waiting(self, e: dict[str, Any]) -> None:
        self._line(f"  waiting for an answer: {escape(str(e.get('command')))}")

    def _on_node_blocked(self, e: dict[str, Any]) -> None:
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
        self._who = f"  iteration {e.get('iteration')}: {e.get('role')} ({e.get('backend')})"
        label = f"{self._who} working on {e.get('phase')}…"
        if self.live:
            # A spinner while the agent works; the finished line replaces it.
            self.close()
            self._status = self.console.status(escape(label))
            self._status.start()
        else:
            self._line(escape(label))

    def _on_agent_finished(self, e: dict[str, Any]) -> None:
        self.close()
        usage = e.get("usage") or {}
        tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        cost = e.get("cost_usd")
        spent = f"{tokens} tokens" + (f", ${cost:.4f}" if cost else "")
        state = "done" if e.get("ok") else f"[red]failed: {escape(str(e.get('error')))}[/]"
        who = escape(self._who) if self.live else f"    {e.get('role')}"
        self._line(f"{who} {state} in {float(e.get('duration_s') or 0):.1f}s ({spent})")

    def _on_agent_violation(self, e: dict[str, Any]) -> None:
        self.close()
        paths = ", ".join(str(p) for p in e.get("paths") or [])
        forged = len(e.get("forged_events") or [])
        removed = f"; {forged} forged journal line(s) removed" if forged else ""
        self._line(
            f"[red]  ! {escape(str(e.get('role')))} changed phasegate's own files: "
            f"{escape(paths)} (put back as they were{removed})[/]"
        )

    def _on_agent_failed(self, e: dict[str, Any]) -> None:
        self._line(
            f"[yellow]    attempt {e.get('tries')}/{e.get('of')} of {e.get('role')} failed[/]"
        )

    def _on_agent_recovered(self, e: dict[str, Any]) -> None:
        self._line(
            f"  ↺ {e.get('role')}'s recorded result ({e.get('attempt')}) reused; "
            "not dispatched again"
        )

    def _on_agent_abandoned(self, e: dict[str, Any]) -> None:
        self._line(f"  ↺ call {e.get('attempt')} was interrupted; dispatching it again")

    def _on_check_finished(self, e: dict[str, Any]) -> None:
        if e.get("skipped"):
            self._line(f"  - check {e.get('check')} skipped (no command configured)")
        elif e.get("passed"):
            self._line(f"  [green]✓[/] check {e.get('check')} passed")
        else:
            self._line(f"  [red]✗[/] check {e.get('check')} failed (exit {e.get('exit_code')})")

    def _on_review_verdict(self, e: dict[str, Any]) -> None:
        issues = e.get("issues") or []
        blockers = [i for i in issues if i.get("severity") == "blocker"]
        if e.get("approved"):
            self._line(f"  [green]✓ iteration {e.get('iteration')}: approved[/]")
            return
        why = "unclear answer" if e.get("unclear") else f"{len(blockers)} blocker(s)"
        if e.get("source") == "checks":
            why = "checks failed"
        self._line(f"  [red]✗ iteration {e.get('iteration')}: not approved ({why})[/]")
        for issue in issues[:5]:
            first = (
                str(issue.get("description", "")).splitlines()[0]
                if issue.get("description")
                else ""
            )
            severity = escape(f"[{issue.get('severity')}]")
            self._line(f"      - {severity} {escape(first)}")

    def _on_phase_completed(self, e: dict[str, Any]) -> None:
        n = e.get("iterations")
        if e.get("review") == "concerns":
            self._line(f"[yellow]✔ {e['phase']} complete ({n} iterations). Reviewer concerns:[/]")
            for note in e.get("reviewer_notes") or []:
                self._line(f"[yellow]      - {escape(str(note).splitlines()[0])}[/]")
        else:
            self._line(f"[green]✔ {e['phase']} complete ({n} iteration{'s' if n != 1 else ''})[/]")

    def _on_decision(self, e: dict[str, Any]) -> None:
        # A warning the person just confirmed at the prompt need not be repeated.
        self._confirmed = e.get("id") == "transition-warning" and e.get("by") == "prompt"
        self._line(f"  ? {e.get('id')}: {e.get('answer')} (by {e.get('by')})")

    def _on_item_completed(self, e: dict[str, Any]) -> None:
        self._line(f"[bold green]★ {e.get('item')} complete:[/] {escape(str(e.get('summary')))}")

    def _on_worktree_finish(self, e: dict[str, Any]) -> None:
        self._line(f"  worktree: {escape(str(e.get('message')))}")
