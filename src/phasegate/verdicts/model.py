"""The one verdict model every workflow's reviewers are read into.

A reviewer's answer, whatever its shape (schema output, JSON in text, a file an
MCP tool wrote, free text), is read into a :class:`Verdict`: an outcome *word*
of the reviewer's vocabulary (``APPROVED``, ``NEEDS_REVISION``, ``OK``,
``PASS WITH NOTES``...), the issues with severity, description and location,
a summary, and how it was read. The word ``UNCLEAR`` means the answer could
not be read; a workflow can never map it to an approving outcome.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

UNCLEAR = "UNCLEAR"

#: Severities that block, whatever vocabulary a reviewer uses.
BLOCKING_SEVERITIES = frozenset({"blocker", "high", "critical"})

#: The most characters a verdict keeps of its summary, or of an issue's description or
#: location: a longer text is clipped (the verdict is kept in the state, the journal, the
#: review history and the next prompt; a reviewer's megabytes would be in each).
MAX_VERDICT_TEXT = 10_000
#: The most issues a verdict keeps: beyond them, blocking issues are kept first and a note
#: says how many were cut.
MAX_ISSUES = 200
#: How far back from the limit a clipped text is cut at a space, so no word (nor a secret,
#: redacted only when written) is cut in two.
_CUT_BACK = 1_000
_SPACE = re.compile(r"\s")


def clipped(text: str, limit: int = MAX_VERDICT_TEXT) -> str:
    """``text``, or its first ``limit`` characters (to a space) and how many were cut."""
    if len(text) <= limit:
        return text
    spaces = [m.start() for m in _SPACE.finditer(text, max(limit - _CUT_BACK, 0), limit)]
    end = spaces[-1] if spaces else limit
    return f"{text[:end]} … [{len(text) - end} characters cut]"


class Issue(BaseModel):
    """One problem a reviewer (or a check, or the engine itself) found."""

    model_config = ConfigDict(frozen=True)

    severity: str
    description: str
    location: str | None = None

    @field_validator("description", "location")
    @classmethod
    def _clip(cls, value: str | None) -> str | None:
        return clipped(value) if value is not None else None

    @property
    def blocking(self) -> bool:
        return self.severity.lower() in BLOCKING_SEVERITIES

    def render(self) -> str:
        where = f" (at {self.location})" if self.location else ""
        return f"[{self.severity}] {self.description}{where}"


class Verdict(BaseModel):
    """A reviewer's answer, read: outcome word, issues, summary, and how it was read.

    ``source`` is one of ``structured`` (schema output), ``json-text`` (a JSON
    document in the answer), ``first-line`` (a verdict word alone on the first
    line), ``fuzzy`` (free text), ``file`` (a file an MCP tool wrote),
    ``engine`` (decided in code without asking), ``checks`` (failing checks),
    or ``unclear``.
    """

    model_config = ConfigDict(frozen=True)

    word: str
    issues: tuple[Issue, ...] = ()
    summary: str = ""
    source: str = "structured"
    #: Extra data a reader keeps (e.g. the round of a review file).
    data: dict[str, Any] = {}

    @field_validator("summary")
    @classmethod
    def _clip(cls, value: str) -> str:
        return clipped(value)

    @field_validator("issues")
    @classmethod
    def _few(cls, value: tuple[Issue, ...]) -> tuple[Issue, ...]:
        if len(value) <= MAX_ISSUES:
            return value
        room = MAX_ISSUES - 1
        blocking = {id(i) for i in [i for i in value if i.blocking][:room]}
        others = room - len(blocking)
        kept: list[Issue] = []
        for issue in value:
            if id(issue) in blocking:
                kept.append(issue)
            elif others > 0:
                kept.append(issue)
                others -= 1
        cut = Issue(severity="note", description=f"{len(value) - len(kept)} more issues cut")
        return (*kept, cut)

    @property
    def unclear(self) -> bool:
        return self.word == UNCLEAR

    @property
    def blockers(self) -> list[Issue]:
        return [i for i in self.issues if i.blocking]


def unclear(reason: str) -> Verdict:
    """The verdict recorded when an answer cannot be read: never approving, one blocker."""
    return Verdict(
        word=UNCLEAR,
        issues=(Issue(severity="blocker", description=reason),),
        summary=reason,
        source="unclear",
    )
