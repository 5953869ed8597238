"""The verdict of an implementation review, read from the REVIEW.md ``create_review`` wrote.

The reviewer's text is never read: only the review the MCP tool recorded for
this very round, during the reviewer's call, counts (WF-R4). A REVIEW.md
already there before the call (an older round, or one an implementer forged)
is set aside under ``reviews/`` first, named for the round it records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from phasegate.agents.base import AgentResult, PromptPart
from phasegate.change.paths import ChangePaths
from phasegate.change.review import CREATE_REVIEW_SCHEMA, read_review
from phasegate.errors import StateCorruptError
from phasegate.state.atomic import atomic_write_bytes, remove_file
from phasegate.verdicts.model import Issue, Verdict
from phasegate.verdicts.readers import ReadContext, ToolCall, VerdictReader


class ChangeReviewReader(VerdictReader):
    """APPROVED / NEEDS_FIX / MAJOR_ISSUES from REVIEW.md (seed 002 WF-R4)."""

    name = "change-review"
    words = ("APPROVED", "NEEDS_FIX", "MAJOR_ISSUES")
    channel = "file"

    def _paths(self, ctx: ReadContext) -> ChangePaths:
        return ChangePaths(ctx.workdir, ctx.item, ctx.item_dir)

    def prepare(self, ctx: ReadContext) -> None:
        """Keep the last REVIEW.md under reviews/ (named for its own round), then remove it."""
        paths = self._paths(ctx)
        path = paths.review_path
        if not path.exists():
            return
        try:
            found = read_review(path)
            round_id = found.round if found is not None else "unknown"
        except StateCorruptError:
            round_id = "unreadable"
        kept = paths.reviews_dir / f"REVIEW.{round_id}.md"
        number = 2
        while kept.exists():
            kept = paths.reviews_dir / f"REVIEW.{round_id}-{number}.md"
            number += 1
        atomic_write_bytes(kept, path.read_bytes())
        remove_file(path)

    def read(self, result: AgentResult, ctx: ReadContext) -> Verdict | None:
        paths = self._paths(ctx)
        review = read_review(paths.review_path)
        if review is None or review.round != ctx.round or review.change_id != ctx.item:
            return None
        findings = [f.model_dump(mode="json") for f in review.findings]
        issues = tuple(
            Issue(
                severity=f.severity.value,
                description=f"{f.file}:{f.line}: {f.description}",
                location=f"{f.file}:{f.line}",
            )
            for f in review.findings
        )
        return Verdict(
            word=review.verdict.value,
            issues=issues,
            summary=review.summary,
            source="file",
            data={"findings": findings, "round": review.round},
        )

    def prompt_part(self, ctx: ReadContext) -> PromptPart:
        return PromptPart(
            "How to submit your review",
            f"Call the `create_review` tool of the `phasegate` MCP server exactly once, with "
            f"change_id {ctx.item!r}. Its arguments:\n\n```json\n"
            + json.dumps(CREATE_REVIEW_SCHEMA, indent=2)
            + f"\n```\n\nOnly that call records a review (round {ctx.round}); a review given "
            "only as text is not recorded and the change is not approved.",
        )

    def missing_message(self, ctx: ReadContext, result: AgentResult) -> str:
        denied = [line for line in result.stderr.splitlines() if "denied" in line.lower()]
        hint = f" (its CLI reported: {denied[-1].strip()})" if denied else ""
        return (
            f"without calling the create_review tool{hint}, so no review was recorded and "
            f"the change is not approved; give its backend phasegate's MCP server "
            f'(docs/change-workflow.md, "The MCP server")'
        )

    def approving(self, word: str, ctx: ReadContext) -> ToolCall:
        arguments: Mapping[str, Any] = {
            "change_id": ctx.item,
            "verdict": word,
            "summary": f"auto: {word}",
            "findings": [],
            "tests_run": [],
        }
        return ToolCall("create_review", arguments)


REVIEW = ChangeReviewReader()
