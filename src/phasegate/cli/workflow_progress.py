"""Progress lines of the workflows whose events the generic printer does not know.

Kept apart from the command modules: the progress printer imports rich's live
display, which ``phasegate --help`` has no use for.
"""

from typing import Any

from rich.markup import escape

from phasegate.cli.progress import ProgressPrinter


class ChangeProgress(ProgressPrinter):
    """Progress lines for the change workflow's own events."""

    def _on_label_changed(self, e: dict[str, Any]) -> None:
        cause = escape(str(e.get("cause")))
        self._line(f"[bold]● phase {e.get('from_label')} → {e.get('to')}[/] ({cause})")

    def _on_step_output_missing(self, e: dict[str, Any]) -> None:
        missing = ", ".join(e.get("missing") or [])
        attempt, of = e.get("attempt"), e.get("of")
        last = isinstance(attempt, int) and isinstance(of, int) and attempt >= of
        again = "" if last else "; trying again"
        self._line(f"[yellow]    {e.get('role')} did not write {escape(missing)}{again}[/]")

    def _on_review_missing(self, e: dict[str, Any]) -> None:
        self._line("[yellow]    the reviewer did not call create_review: no review recorded[/]")

    def _on_tasks_frontmatter_fixed(self, e: dict[str, Any]) -> None:
        self._line(f"  tasks.md frontmatter: {escape(str(e.get('reason')))}")

    def _on_spec_merged(self, e: dict[str, Any]) -> None:
        self._line(f"  merged {escape(str(e.get('spec')))}")


class ImplementProgress(ProgressPrinter):
    """Progress lines for the implement workflow's own events."""

    def _on_implement_context(self, e: dict[str, Any]) -> None:
        docs = ", ".join(e.get("documents") or {}) or "no BRD/PRD/SDD"
        self._line(
            f"  plan {escape(str(e.get('plan')))}: {e.get('open')} of {e.get('tasks')} task(s) "
            f"open in {e.get('phases')} phase(s); context: {escape(docs)}"
        )
        for note in e.get("notes") or []:
            self._line(f"[yellow]  ! {escape(str(note))}[/]")

    def _on_executor_selected(self, e: dict[str, Any]) -> None:
        self._line(f"  implementer: {escape(str(e.get('role')))}")

    def _on_implement_pattern(self, e: dict[str, Any]) -> None:
        suggested = escape(str(e.get("suggested")))
        if e.get("known") is False:
            self._line(
                f"[yellow]  recurring issues ({e.get('same_issue_count')}): {suggested} would "
                f"review next ({escape(str(e.get('reason')))}), but it is not an agent here[/]"
            )
            return
        self._line(
            f"[yellow]  recurring issues ({e.get('same_issue_count')}): next reviewer "
            f"{suggested} ({escape(str(e.get('reason')))})[/]"
        )

    def _on_review_timeout(self, e: dict[str, Any]) -> None:
        self._line(f"[yellow]  review by {escape(str(e.get('role')))} timed out[/]")

    def _on_implement_ticked(self, e: dict[str, Any]) -> None:
        how = e.get("how")
        self._line(f"  [green]☑[/] PLAN.md line {e.get('line')} ticked ({how})")

    def _on_implement_tick_waiting(self, e: dict[str, Any]) -> None:
        self._line(
            f"  PLAN.md: {escape(str(e.get('how')))}; ticked once the phase's merged work is "
            "in the work tree"
        )

    def _on_implement_checkpoint(self, e: dict[str, Any]) -> None:
        checks = ", ".join(e.get("checks") or []) or "none configured"
        self._line(f"  validation checkpoint of {escape(str(e.get('phase')))}: {checks}")
