"""The structured implementation review: what ``create_review`` accepts and REVIEW.md holds.

REVIEW.md is written only by the ``create_review`` tool (WF-R4). It is a
markdown document for people with the structured review in its YAML
frontmatter, which the engine reads back and validates again: the verdict
comes from there, never from the reviewer's free text.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from phasegate.agents.schema import tool_json_schema
from phasegate.change.frontmatter import split_frontmatter
from phasegate.errors import BadInputError, StateCorruptError
from phasegate.state.atomic import atomic_write_text


class ReviewVerdict(StrEnum):
    """The implementation verdicts of WF-R4."""

    APPROVED = "APPROVED"
    NEEDS_FIX = "NEEDS_FIX"
    MAJOR_ISSUES = "MAJOR_ISSUES"


class FindingSeverity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: A path relative to the repository that does not climb out of it (as the schema says it).
RELATIVE_PATH = r"^(?!/)(?!(.*/)?\.\.(/|$))"


class Finding(_Strict):
    """One problem in the implementation, pinned to a file and line."""

    severity: FindingSeverity
    file: str = Field(
        min_length=1,
        description="Path relative to the repository.",
        json_schema_extra={"pattern": RELATIVE_PATH},
    )
    line: int = Field(ge=1, strict=True)
    description: str = Field(min_length=1)

    @field_validator("file")
    @classmethod
    def _relative_file(cls, value: str) -> str:
        parts = Path(value).parts
        if Path(value).is_absolute() or ".." in parts:
            raise ValueError(f"{value!r} must be a path relative to the repository, inside it")
        return value

    def render(self) -> str:
        return f"[{self.severity.value}] {self.file}:{self.line}: {self.description}"


class TestRun(_Strict):
    """A test command the reviewer ran, and how it went."""

    __test__ = False  # not a pytest class, whatever its name

    command: str = Field(min_length=1)
    passed: bool = Field(strict=True)
    summary: str = ""


class ReviewSubmission(_Strict):
    """The arguments of ``create_review``."""

    change_id: str = Field(min_length=1, description="The change being reviewed.")
    verdict: ReviewVerdict = Field(
        description=(
            "APPROVED: ready to archive. NEEDS_FIX: fixable problems (listed as findings). "
            "MAJOR_ISSUES: a person must step in."
        )
    )
    summary: str = Field(min_length=1, description="One paragraph: what you checked.")
    findings: tuple[Finding, ...] = ()
    tests_run: tuple[TestRun, ...] = ()

    @field_validator("summary")
    @classmethod
    def _summary_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty or only spaces")
        return value


class RecordedReview(_Strict):
    """A review as REVIEW.md records it: the submission plus the round it answers."""

    change_id: str
    round: str
    iteration: int
    created: str
    verdict: ReviewVerdict
    summary: str
    findings: tuple[Finding, ...] = ()
    tests_run: tuple[TestRun, ...] = ()


#: JSON schema of ``create_review``'s arguments, as agents are shown it: generated from
#: :class:`ReviewSubmission`, the model that reads them, so the two never disagree.
CREATE_REVIEW_SCHEMA: dict[str, Any] = tool_json_schema(ReviewSubmission)


def validate_submission(arguments: Mapping[str, Any]) -> ReviewSubmission:
    """Check ``create_review``'s arguments; :class:`BadInputError` names the first bad field."""
    try:
        review = ReviewSubmission.model_validate(dict(arguments))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
        if error["type"] == "missing":
            message = "required field is missing"
        elif error["type"] == "tuple_type":  # arrays in the schema agents are shown
            message = "Input should be a valid list"
        detail = message.removeprefix("Value error, ")
        raise BadInputError(f"create_review: {where}: {detail}") from None
    if review.verdict is ReviewVerdict.APPROVED and any(
        f.severity is FindingSeverity.HIGH for f in review.findings
    ):
        raise BadInputError(
            "create_review: an APPROVED review cannot list high-severity findings; "
            "use NEEDS_FIX or MAJOR_ISSUES"
        )
    if review.verdict is not ReviewVerdict.APPROVED and not review.findings:
        raise BadInputError(
            f"create_review: a {review.verdict.value} review must list at least one finding"
        )
    return review


def render_review(review: RecordedReview) -> str:
    """REVIEW.md: the structured review as frontmatter, then the same for people."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    buffer = io.StringIO()
    yaml.dump(review.model_dump(mode="json"), buffer)
    lines = [
        "---",
        buffer.getvalue().rstrip("\n"),
        "---",
        f"# Review of {review.change_id} (iteration {review.iteration})",
        "",
        f"**Verdict: {review.verdict.value}**",
        "",
        review.summary.strip(),
        "",
        "## Findings",
        "",
    ]
    if review.findings:
        lines += ["| # | severity | location | description |", "|---|---|---|---|"]
        for number, finding in enumerate(review.findings, start=1):
            text = " ".join(finding.description.split()).replace("|", "\\|")
            where = f"`{finding.file}:{finding.line}`"
            lines.append(f"| {number} | {finding.severity.value} | {where} | {text} |")
    else:
        lines.append("None.")
    lines += ["", "## Tests run", ""]
    if review.tests_run:
        for run in review.tests_run:
            outcome = "passed" if run.passed else "FAILED"
            extra = f": {run.summary.strip()}" if run.summary.strip() else ""
            lines.append(f"- `{run.command}`: {outcome}{extra}")
    else:
        lines.append("None reported.")
    return "\n".join(lines) + "\n"


def write_review(path: Path, review: RecordedReview) -> None:
    """Replace REVIEW.md atomically."""
    atomic_write_text(path, render_review(review))


def read_review(path: Path) -> RecordedReview | None:
    """The review REVIEW.md records, ``None`` if there is none; corrupt -> StateCorruptError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    front, _, problem = split_frontmatter(text)
    if front is None:
        raise StateCorruptError(
            f"{path} has no structured review ({problem or 'no YAML frontmatter'}); "
            "only the create_review tool writes it"
        )
    try:
        return RecordedReview.model_validate(front)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise StateCorruptError(
            f"{path}: frontmatter field {where}: {error['msg']}; "
            "only the create_review tool writes it"
        ) from None
