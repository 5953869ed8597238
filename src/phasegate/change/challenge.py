"""The challenger's planning verdict (WF-R2) and the review block it leaves in proposal.md.

The verdict is read from schema-validated structured output first, JSON in
the text second, an explicit verdict word on the first line last. Unclear
never means approved: it counts as NEEDS_REVISION with a high-severity issue
saying so, and an APPROVED that lists a high-severity issue is not approved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from phasegate.agents.base import AgentResult
from phasegate.change.state import ChallengeIssue, ChallengeVerdictName
from phasegate.state.atomic import atomic_write_text

#: Schema handed to backends that enforce structured output (strict-mode friendly).
CHALLENGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "summary", "issues"],
    "properties": {
        "verdict": {"type": "string", "enum": ["APPROVED", "NEEDS_REVISION", "REJECTED"]},
        "summary": {"type": "string"},
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["severity", "description", "location"],
                "properties": {
                    "severity": {"type": "string", "enum": ["high", "medium", "low"]},
                    "description": {"type": "string"},
                    "location": {"type": ["string", "null"]},
                },
            },
        },
    },
}


class _Issue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    severity: Literal["high", "medium", "low"]
    description: str = Field(min_length=1)
    location: str | None = None


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: ChallengeVerdictName
    summary: str = ""
    issues: list[_Issue] = Field(default_factory=list)


@dataclass(frozen=True)
class ChallengeReading:
    """A verdict as read from the challenger's answer, and how it was read."""

    verdict: ChallengeVerdictName
    summary: str
    issues: tuple[ChallengeIssue, ...]
    source: Literal["structured", "json-text", "first-line", "unclear"]

    @property
    def minor_only(self) -> bool:
        """No high-severity issue: the seed's "iteration limit reached with minor issues"."""
        return not any(i.severity == "high" for i in self.issues)


_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.S)
_FIRST_LINE = re.compile(
    r"^\W*(?:verdict\s*[:=-]\s*)?\W*(APPROVED|NEEDS[_ ]REVISION|REJECTED)\W*$", re.I
)


def _validated(data: Any) -> _Verdict | None:
    if not isinstance(data, Mapping):
        return None
    try:
        return _Verdict.model_validate(dict(data))
    except ValidationError:
        return None


def _reading(found: _Verdict, source: Literal["structured", "json-text"]) -> ChallengeReading:
    issues = tuple(ChallengeIssue(**i.model_dump()) for i in found.issues)
    verdict = found.verdict
    if verdict == "APPROVED" and any(i.severity == "high" for i in issues):
        verdict = "NEEDS_REVISION"  # approval with a high-severity issue is not approval
    return ChallengeReading(verdict, found.summary, issues, source)


def _unclear(reason: str) -> ChallengeReading:
    issue = ChallengeIssue(severity="high", description=reason)
    return ChallengeReading("NEEDS_REVISION", reason, (issue,), "unclear")


def read_challenge(result: AgentResult) -> ChallengeReading:
    """Read the challenger's result (structured, then JSON text, then a first-line verdict)."""
    if result.structured is not None:
        found = _validated(result.structured)
        if found is not None:
            return _reading(found, "structured")
        return _unclear(
            "The challenger's structured answer does not match the verdict schema; "
            "treated as NEEDS_REVISION."
        )
    text = result.text.strip()
    candidates = [m.group(1) for m in _FENCED.finditer(text)] + [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            found = _validated(json.loads(candidate))
        except json.JSONDecodeError:
            continue
        if found is not None:
            return _reading(found, "json-text")
    first, _, rest = text.partition("\n")
    match = _FIRST_LINE.match(first.strip())
    if match:
        word = match.group(1).upper().replace(" ", "_")
        verdict: ChallengeVerdictName = word  # type: ignore[assignment]
        issues: tuple[ChallengeIssue, ...] = ()
        if verdict != "APPROVED" and rest.strip():
            issues = (ChallengeIssue(severity="medium", description=rest.strip()),)
        return ChallengeReading(verdict, rest.strip() or first.strip(), issues, "first-line")
    return _unclear(
        "The challenger's answer could not be read as a verdict; treated as NEEDS_REVISION."
    )


def block_marker(round_id: str) -> str:
    return f"<!-- phasegate:challenge {round_id} -->"


def render_block(round_id: str, iteration: int, reading: ChallengeReading, by: str, at: str) -> str:
    """The review block appended to proposal.md (WF-R2's note)."""
    lines = [
        block_marker(round_id),
        f"## Challenge review {iteration}: {reading.verdict}",
        "",
        f"*{by}, {at}*",
        "",
        reading.summary.strip() or "(no summary)",
    ]
    if reading.issues:
        lines.append("")
        for issue in reading.issues:
            where = f" (at {issue.location})" if issue.location else ""
            text = " ".join(issue.description.split())
            lines.append(f"- **{issue.severity}**: {text}{where}")
    lines.append("<!-- /phasegate:challenge -->")
    return "\n".join(lines) + "\n"


def append_block(path: Path, round_id: str, block: str) -> bool:
    """Append ``block`` to proposal.md unless this round's block is already there."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if block_marker(round_id) in text:
        return False  # a resumed run already wrote it
    separator = (
        "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    )
    atomic_write_text(path, text + separator + block)
    return True
