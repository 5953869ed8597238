"""The verdict of an implementation review, read from the REVIEW.md ``create_review`` wrote.

The reviewer's text is never read: only the review the MCP tool recorded for
this very round, during the reviewer's call, counts (WF-R4). REVIEW.md is
one of the change's protected files (see :class:`~phasegate.change.view.ChangeView`):
it is open to writes only while a reviewer's call runs, so any other agent's
edit is put back. A REVIEW.md already there before the call is set aside under
``reviews/`` first, named for the round phasegate recorded it under (the
``review.recorded`` journal event with the same content), ``<round>-interrupted``
when it is a review of the round under way that phasegate never read back, or
``unrecorded`` when phasegate never recorded that content (a hand edit). The
review of a reviewer's call phasegate was killed in is read on resume instead
(:meth:`ChangeReviewReader.recover`): the call is not made again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from phasegate.agents.base import AgentResult, PromptPart
from phasegate.change.paths import ChangePaths
from phasegate.change.review import CREATE_REVIEW_SCHEMA, read_review
from phasegate.errors import StateCorruptError
from phasegate.state.atomic import atomic_write_bytes, remove_file
from phasegate.state.journal import Journal
from phasegate.verdicts.model import Issue, Verdict
from phasegate.verdicts.readers import ReadContext, ToolCall, VerdictReader

#: The journal event that records the review phasegate read: its round and its content.
RECORDED_EVENT = "review.recorded"
#: The name an earlier REVIEW.md whose content phasegate never recorded is filed under.
UNRECORDED = "unrecorded"

#: The suffix of a review of the round under way whose call phasegate never read back.
INTERRUPTED = "interrupted"

_open_lock = threading.Lock()
#: REVIEW.md files (absolute paths) a reviewer's call may write now: from just before the
#: call (``prepare``) until its review is read (``read``).
_open_reviews: set[str] = set()


def review_digest(data: bytes) -> str:
    """How a recorded review's content is recognised when it is filed under ``reviews/``."""
    return hashlib.sha256(data).hexdigest()


def review_open(path: Path) -> bool:
    """Whether a reviewer's call may write ``path`` (a REVIEW.md) now."""
    with _open_lock:
        return os.path.abspath(path) in _open_reviews


def close_review(path: Path) -> None:
    """No reviewer's call may write ``path`` any more (its call ended, or none runs)."""
    with _open_lock:
        _open_reviews.discard(os.path.abspath(path))


def _open_review(path: Path) -> None:
    with _open_lock:
        _open_reviews.add(os.path.abspath(path))


def recorded_round(paths: ChangePaths, data: bytes, journal_file: str = ".journal.jsonl") -> str:
    """The round phasegate recorded the review ``data`` under, or ``unrecorded``."""
    digest = review_digest(data)
    try:
        found = Journal(paths.dir / journal_file).find(RECORDED_EVENT, sha256=digest)
    except StateCorruptError:
        found = None
    round_id = str(found.get("round") or "") if found is not None else ""
    return round_id if round_id and all(c.isalnum() or c in ".-" for c in round_id) else UNRECORDED


def _of_round(path: Path, ctx: ReadContext) -> bool:
    """Whether REVIEW.md at ``path`` is a review of this change for the round ``ctx`` runs."""
    try:
        review = read_review(path)
    except StateCorruptError:
        return False
    if not ctx.round or not all(c.isalnum() or c in ".-" for c in ctx.round):
        return False
    return review is not None and review.round == ctx.round and review.change_id == ctx.item


class ChangeReviewReader(VerdictReader):
    """APPROVED / NEEDS_FIX / MAJOR_ISSUES from REVIEW.md (seed 002 WF-R4)."""

    name = "change-review"
    words = ("APPROVED", "NEEDS_FIX", "MAJOR_ISSUES")
    channel = "file"

    def _paths(self, ctx: ReadContext) -> ChangePaths:
        return ChangePaths(ctx.workdir, ctx.item, ctx.item_dir)

    def prepare(self, ctx: ReadContext) -> None:
        """Keep the last REVIEW.md under reviews/ (named for the round phasegate recorded it
        under), remove it, and open it to the coming reviewer's call."""
        paths = self._paths(ctx)
        path = paths.review_path
        if path.exists():
            data = path.read_bytes()
            round_id = recorded_round(paths, data)
            if round_id == UNRECORDED and _of_round(path, ctx):
                # A review of this round phasegate never read back, and no call of it to
                # recover: the call is made again, this review kept by name.
                round_id = f"{ctx.round}-{INTERRUPTED}"
            kept = paths.reviews_dir / f"REVIEW.{round_id}.md"
            number = 2
            while kept.exists():
                if kept.read_bytes() == data:  # filed already (a run stopped after that)
                    break
                kept = paths.reviews_dir / f"REVIEW.{round_id}-{number}.md"
                number += 1
            atomic_write_bytes(kept, data)
            remove_file(path)
        _open_review(path)

    def recover(self, ctx: ReadContext) -> str | None:
        """Why the REVIEW.md of a reviewer's call phasegate died in is its answer, or
        ``None`` (asked again). Only such a call could write it: ``prepare`` removed the
        last one before that call, and only a reviewer's call may write it; so a complete
        review of this change and round that phasegate never read back is the one
        ``create_review`` recorded, and asking again would only pay for it twice."""
        paths = self._paths(ctx)
        path = paths.review_path
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if recorded_round(paths, data) != UNRECORDED or not _of_round(path, ctx):
            return None
        return (
            f"the reviewer's call was interrupted after create_review recorded its review "
            f"of round {ctx.round} ({paths.rel(path)}): that review is read, the reviewer "
            "is not asked again"
        )

    def read(self, result: AgentResult, ctx: ReadContext) -> Verdict | None:
        paths = self._paths(ctx)
        close_review(paths.review_path)
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
