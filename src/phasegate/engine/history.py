"""``.review-history.md``: every review iteration, in seed 000's format (interface 4).

The file is rendered from the iterations recorded in the state file, so
writing it is idempotent: a run that dies between the state commit and this
write simply writes it on its next commit.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from phasegate.redact import Redactor
from phasegate.state.atomic import atomic_write_text
from phasegate.state.item import IterationRecord


def verdict_label(record: IterationRecord) -> str:
    if record.source == "checks":
        return "checks failed (not approved)"
    if record.unclear:
        return "unclear (not approved)"
    return "approved" if record.approved else "not approved"


def render_history(item: str, records: Iterable[IterationRecord]) -> str:
    """The whole history document for ``records``."""
    lines = [f"# Review history: {item}", ""]
    current_phase: str | None = None
    for record in records:
        if record.phase != current_phase:
            lines += [f"## Phase: {record.phase}", ""]
            current_phase = record.phase
        lines += [
            f"### Iteration {record.iteration} - {record.timestamp}",
            "",
            f"**Verdict:** {verdict_label(record)} ({record.source})",
            "",
            "**Reviewer Feedback:**",
            record.summary.strip() or "(no summary)",
            "",
            "**Issues:**",
        ]
        if record.issues:
            for issue in record.issues:
                where = f" (at {issue.location})" if issue.location else ""
                lines.append(f"- [{issue.severity}] {issue.description.strip()}{where}")
        else:
            lines.append("- none")
        lines += [
            "",
            "**Changes Made:**",
            record.changes.strip() or "(not reported)",
            "",
            "---",
            "",
        ]
    return "\n".join(lines)


def sync_history(path: Path, item: str, records: list[IterationRecord], redactor: Redactor) -> None:
    """Write the history file if its content differs from what the state implies."""
    if not records:
        return
    text = redactor.text(render_history(item, records))
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except FileNotFoundError:
        pass
    # Derived from the state file, so it needs no fsync: a run rewrites it.
    atomic_write_text(path, text, durable=False)
