"""The one verdict model every workflow's reviewers are read into.

A reviewer's answer, whatever its shape (schema output, JSON in text, a file an
MCP tool wrote, free text), is read into a :class:`Verdict`: an outcome *word*
of the reviewer's vocabulary (``APPROVED``, ``NEEDS_REVISION``, ``OK``,
``PASS WITH NOTES``...), the issues with severity, description and location,
a summary, and how it was read. The word ``UNCLEAR`` means the answer could
not be read; a workflow can never map it to an approving outcome.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

UNCLEAR = "UNCLEAR"

#: Severities that block, whatever vocabulary a reviewer uses.
BLOCKING_SEVERITIES = frozenset({"blocker", "high", "critical"})


class Issue(BaseModel):
    """One problem a reviewer (or a check, or the engine itself) found."""

    model_config = ConfigDict(frozen=True)

    severity: str
    description: str
    location: str | None = None

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
