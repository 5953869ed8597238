"""Review verdicts: validated structured output first, a conservative text reader second.

Unclear never means approved: an answer that cannot be read as a verdict is
recorded as *unclear* and not approved, with a blocker saying so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from phasegate.agents.base import AgentResult


class Severity(StrEnum):
    BLOCKER = "blocker"
    WARNING = "warning"
    NOTE = "note"


class ReviewIssue(BaseModel):
    """One problem a reviewer found."""

    model_config = ConfigDict(frozen=True)

    severity: Severity
    description: str = Field(min_length=1)
    location: str | None = None


class ReviewVerdict(BaseModel):
    """A reviewer's answer: ``{approved, issues[{severity, description, location}], summary}``."""

    model_config = ConfigDict(frozen=True)

    # Strict: "yes", "true" or 1 do not match the schema's boolean, so they never approve.
    approved: bool = Field(strict=True)
    issues: tuple[ReviewIssue, ...] = ()
    summary: str = ""

    @property
    def blockers(self) -> list[ReviewIssue]:
        return [i for i in self.issues if i.severity is Severity.BLOCKER]

    @property
    def passes(self) -> bool:
        """Approved only when the reviewer says so AND no blocker is listed."""
        return self.approved and not self.blockers


VerdictSource = Literal["structured", "json-text", "fuzzy", "unclear", "engine", "checks"]


class VerdictReading(BaseModel):
    """A verdict as read from an agent's answer, with how it was read."""

    model_config = ConfigDict(frozen=True)

    verdict: ReviewVerdict
    source: VerdictSource
    unclear: bool = False

    @property
    def approved(self) -> bool:
        return not self.unclear and self.verdict.passes


#: JSON schema handed to backends that can enforce structured output. It is
#: written to satisfy strict schema modes (every property required, no extras).
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approved", "issues", "summary"],
    "properties": {
        "approved": {"type": "boolean"},
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["severity", "description", "location"],
                "properties": {
                    "severity": {"type": "string", "enum": ["blocker", "warning", "note"]},
                    "description": {"type": "string"},
                    "location": {"type": ["string", "null"]},
                },
            },
        },
        "summary": {"type": "string"},
    },
}

# Seed 004's patterns, matched against the first line of a free-text answer.
APPROVAL_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
        r"^APPROVED$",
        r"^LOOKS\s+GOOD$",
        r"^LGTM$",
        r"^SHIP\s+IT$",
        r"^\+1$",
        r"^READY\s+TO\s+(MERGE|SHIP)$",
        r"^ALL\s+GOOD$",
        r"^PASSED\s+REVIEW$",
        r"^✅",
        r"^👍",
    )
)
REVISION_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
        r"^NEEDS[\s_]REVISION$",
        r"^REQUIRES?\s+CHANGES?$",
        r"^NEEDS?\s+WORK$",
        r"^NOT\s+READY$",
        r"^-1$",
        r"^BLOCKED$",
        r"^FIX\s+REQUIRED$",
        r"^❌",
        r"^👎",
    )
)
_ISSUE_WORDS = re.compile(r"\b(issue|problem|error|bug|wrong|incorrect|missing)\b", re.I)
_FENCED_JSON = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.S)


def unclear_reading(reason: str) -> VerdictReading:
    """The reading recorded when an answer cannot be read: not approved, one blocker."""
    issue = ReviewIssue(severity=Severity.BLOCKER, description=reason)
    return VerdictReading(
        verdict=ReviewVerdict(approved=False, issues=(issue,), summary=reason),
        source="unclear",
        unclear=True,
    )


def parse_structured(data: Any) -> ReviewVerdict | None:
    """Validate ``data`` against the verdict schema; ``None`` if it does not fit."""
    if not isinstance(data, Mapping):
        return None
    try:
        return ReviewVerdict.model_validate(dict(data))
    except ValidationError:
        return None


def _json_in_text(text: str) -> ReviewVerdict | None:
    candidates = [m.group(1) for m in _FENCED_JSON.finditer(text)]
    candidates.append(text.strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            verdict = parse_structured(json.loads(candidate))
        except json.JSONDecodeError:
            continue
        if verdict is not None:
            return verdict
    return None


def read_fuzzy(text: str) -> VerdictReading:
    """Seed 004's fuzzy status detection, made conservative.

    An explicit approval pattern on the first line approves; an explicit
    revision pattern, or issue words in the text, asks for revision. Praise
    alone is *not* taken as approval: it is unclear.
    """
    stripped = text.strip()
    first = stripped.split("\n", 1)[0].strip() if stripped else ""
    rest = stripped.split("\n", 1)[1].strip() if "\n" in stripped else ""
    if any(p.search(first) for p in APPROVAL_PATTERNS):
        return VerdictReading(
            verdict=ReviewVerdict(approved=True, summary=rest or first), source="fuzzy"
        )
    if any(p.search(first) for p in REVISION_PATTERNS) or _ISSUE_WORDS.search(stripped):
        issue = ReviewIssue(severity=Severity.BLOCKER, description=rest or first or stripped)
        return VerdictReading(
            verdict=ReviewVerdict(approved=False, issues=(issue,), summary=first),
            source="fuzzy",
        )
    return unclear_reading(
        "The reviewer's answer could not be read as a verdict; treated as not approved."
    )


def read_verdict(result: AgentResult) -> VerdictReading:
    """Read a reviewer's result: schema output, then JSON in text, then fuzzy text."""
    if result.structured is not None:
        verdict = parse_structured(result.structured)
        if verdict is not None:
            return VerdictReading(verdict=verdict, source="structured")
        return unclear_reading(
            "The reviewer's structured answer does not match the verdict schema; "
            "treated as not approved."
        )
    verdict = _json_in_text(result.text)
    if verdict is not None:
        return VerdictReading(verdict=verdict, source="json-text")
    return read_fuzzy(result.text)
