"""Verdict readers: turn an agent's answer into a :class:`~phasegate.verdicts.model.Verdict`.

Each reader is a plug-in of the ``phasegate.readers`` group. The built-in ones:

- ``approval``: seed 000's ``{approved, issues[{severity: blocker|warning|note,
  description, location}], summary}``; words ``APPROVED`` (approved and no
  blocker) and ``REJECTED``.
- ``words``: ``{verdict, summary, issues[{severity: high|medium|low, ...}]}``
  where ``verdict`` is one word of the reviewer's vocabulary (its ``on`` keys);
  an approving word listing a high-severity issue becomes the revision word
  (``UNCLEAR`` when the vocabulary maps no word to ``revise``).
- ``fuzzy``: free text by seed 004's rules (``APPROVED``, ``NEEDS_REVISION``,
  ``UNCLEAR``); a JSON verdict in the answer still wins.

Every reader is conservative: when the backend was made to answer in a schema
(claude ``--json-schema``, codex ``--output-schema``, OpenAI JSON mode), free
text never approves; an answer that cannot be read is ``UNCLEAR``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
)

from phasegate.agents.base import AgentResult
from phasegate.verdicts.model import UNCLEAR, Issue, Verdict, unclear
from phasegate.verdicts.schema import strict_schema
from phasegate.verdicts.text import (
    REVISION_PATTERNS,
    after_approval,
    approval_naming_a_problem,
    detect_review_status,
    fenced_documents,
    first_line,
    first_line_word,
    fuzzy_status,
    json_document,
    names_a_problem,
)


@dataclass(frozen=True)
class ReadContext:
    """What a reader knows about the review it reads."""

    #: The reviewer's vocabulary (its ``on`` keys, ``UNCLEAR`` excluded), in order.
    words: tuple[str, ...] = ()
    #: The words the reviewer maps to ``pass``.
    pass_words: frozenset[str] = frozenset()
    #: The first word the reviewer maps to ``revise`` (approvals with blockers become it).
    revise_word: str | None = None
    #: The backend was handed the schema and enforces it: free text never approves.
    structured_enforced: bool = False
    item: str = ""
    item_dir: Path = field(default_factory=Path)
    workdir: Path = field(default_factory=Path)
    #: Which review round this is (``visit.iteration``), for readers of files.
    round: str = ""


@dataclass(frozen=True)
class ToolCall:
    """An approving answer given by calling an MCP tool (for the ``auto`` backend)."""

    tool: str
    arguments: Mapping[str, Any]


class VerdictReader:
    """Base class of readers: a schema for the agent, and how to read its answer."""

    name = "reader"
    #: The words this reader produces; ``None``: the reviewer's own vocabulary.
    words: tuple[str, ...] | None = None
    #: How an answer reaches the reader: the agent's reply, or a file a tool writes.
    channel: Literal["reply", "file"] = "reply"

    def schema(self, ctx: ReadContext) -> dict[str, Any] | None:
        """The JSON schema of the answer (``None``: no structured answer is asked for)."""
        return None

    def read(self, result: AgentResult, ctx: ReadContext) -> Verdict | None:
        """The verdict of ``result``; ``None`` when the answer recorded no verdict at all."""
        raise NotImplementedError

    def approving(self, word: str, ctx: ReadContext) -> Mapping[str, Any] | ToolCall:
        """An answer this reader reads as ``word`` (what the ``auto`` backend gives)."""
        raise NotImplementedError


# -- approval: seed 000 -------------------------------------------------------------


class ApprovalIssue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    severity: Literal["blocker", "warning", "note"]
    description: str = Field(min_length=1)
    location: str | None = None

    @field_validator("location", mode="before")
    @classmethod
    def _line_number(cls, value: Any) -> Any:
        return _line_number(value)


def _line_number(value: Any) -> Any:
    """A line given as a number (``42``) is a line reference like ``"42"``."""
    return str(value) if type(value) is int else value


class ApprovalAnswer(BaseModel):
    """A reviewer's answer: ``{approved, issues[{severity, description, location}], summary}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Strict: "yes", "true" or 1 do not match the schema's boolean, so they never approve.
    approved: bool = Field(strict=True)
    issues: list[ApprovalIssue] = Field(default_factory=list)
    summary: str = ""


def _validate(model: type[BaseModel], data: Any) -> BaseModel | None:
    if not isinstance(data, Mapping):
        return None
    try:
        return model.model_validate(dict(data))
    except ValidationError:
        return None


def _field(loc: tuple[int | str, ...]) -> str:
    """``("issues", 0, "severity")`` -> ``issues[0].severity``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the answer"


def schema_mismatch(model: type[BaseModel], data: Any) -> str:
    """Why ``data`` does not match ``model``: its first wrong field, and what it allows."""
    if not isinstance(data, Mapping):
        return f"the answer is {type(data).__name__}, not an object"
    try:
        model.model_validate(dict(data))
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        where = _field(tuple(first["loc"]))
        expected = (first.get("ctx") or {}).get("expected")
        if first["type"] == "literal_error" and expected:
            why = f"{first['input']!r} is not one of {expected}"
        elif first["type"] == "missing":
            why = "field required"
        elif first["type"] == "extra_forbidden":
            why = "not a field of the schema"
        else:
            why = str(first["msg"])
            why = why[:1].lower() + why[1:]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"{where}: {why}{more}"
    return "no field is wrong"


#: The unclear verdict's reason when a text answer's final verdict approves and another
#: verdict in it does not.
DISAGREEING = (
    "The reviewer's answer holds more than one verdict, and they disagree; treated as not approved."
)


def _disagrees(model: type[BaseModel], text: str, found: BaseModel, key: str) -> bool:
    """Whether a fenced block of ``text`` holds another answer of ``model`` whose ``key``
    differs from ``found``'s (asked of an approving ``found``: a rejection above the final
    approval makes the answer unclear; an approval quoted above a final rejection does not
    approve anything, so the rejection is read)."""
    for document in fenced_documents(text):
        other = _validate(model, document)
        if other is not None and getattr(other, key) != getattr(found, key):
            return True
    return False


def _names_field(document: Any, name: str) -> bool:
    """Whether ``document`` is a JSON object with a key that reads as ``name`` (any case):
    a verdict meant, that the schema does not take."""
    return isinstance(document, Mapping) and any(
        str(key).strip().lower() == name for key in document
    )


def _mismatch(model: type[BaseModel], data: Any) -> Verdict:
    """The unclear verdict of a structured answer that does not match the schema."""
    return unclear(
        "The reviewer's structured answer does not match the verdict schema "
        f"({schema_mismatch(model, data)}); treated as not approved."
    )


class ApprovalReader(VerdictReader):
    """Seed 000's structured review; ``APPROVED`` only when approved with no blocker."""

    name = "approval"
    words = ("APPROVED", "REJECTED")

    def schema(self, ctx: ReadContext) -> dict[str, Any]:
        return strict_schema(ApprovalAnswer)

    def _verdict(self, answer: ApprovalAnswer, source: str) -> Verdict:
        issues = tuple(
            Issue(severity=i.severity, description=i.description, location=i.location)
            for i in answer.issues
        )
        blockers = sum(1 for i in answer.issues if i.severity == "blocker")
        approved = answer.approved and not blockers
        summary = answer.summary
        if answer.approved and blockers:
            # Said where the feedback is read: an approval naming a blocker is a rejection.
            summary = " ".join(
                filter(None, [summary.strip(), APPROVED_WITH_BLOCKERS.format(n=blockers)])
            )
        if not approved and not issues:
            # A rejection that names no issue still says why: its summary is the feedback.
            issues = (Issue(severity="blocker", description=summary.strip() or NO_REASON),)
            summary = summary.strip() or NO_REASON
        word = "APPROVED" if approved else "REJECTED"
        return Verdict(word=word, issues=issues, summary=summary, source=source)

    def read(self, result: AgentResult, ctx: ReadContext) -> Verdict:
        if result.structured is not None:
            found = _validate(ApprovalAnswer, result.structured)
            if isinstance(found, ApprovalAnswer):
                return self._verdict(found, "structured")
            return _mismatch(ApprovalAnswer, result.structured)
        document = json_document(result.text)
        found = _validate(ApprovalAnswer, document)
        if isinstance(found, ApprovalAnswer):
            if found.approved and _disagrees(ApprovalAnswer, result.text, found, "approved"):
                return unclear(DISAGREEING)
            return self._verdict(found, "json-text")
        if ctx.structured_enforced or result.cut_off:
            return _keeping_words(unclear(_free_text(result)), result.text)
        if _names_field(document, "approved"):
            # A verdict that does not match the schema, whatever the prose around it says.
            return _mismatch(ApprovalAnswer, document)
        # Praise alone never approves here: only an explicit first-line approval does.
        if approval_naming_a_problem(result.text):
            return _approval_naming_a_problem(result.text)
        status = fuzzy_status(result.text, implicit_approval=False)
        if status == UNCLEAR:
            return _keeping_words(
                unclear(
                    "The reviewer's answer could not be read as a verdict; treated as not approved."
                ),
                result.text,
            )
        text = result.text.strip()
        first, _, rest = text.partition("\n")
        if status == "APPROVED":
            return Verdict(word="APPROVED", summary=rest.strip() or first.strip(), source="fuzzy")
        issue = Issue(severity="blocker", description=rest.strip() or first.strip() or text)
        return Verdict(word="REJECTED", issues=(issue,), summary=first.strip(), source="fuzzy")

    def approving(self, word: str, ctx: ReadContext) -> Mapping[str, Any]:
        approved = word == "APPROVED"
        issues = (
            [] if approved else [{"severity": "blocker", "description": "auto", "location": None}]
        )
        return {"approved": approved, "issues": issues, "summary": f"auto: {word}"}


# -- words: a vocabulary of verdict words (seed 002's challenge, seed 003's agents) -------


class WordIssue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    severity: Literal["high", "medium", "low"]
    description: str = Field(min_length=1)
    location: str | None = None

    @field_validator("location", mode="before")
    @classmethod
    def _line_number(cls, value: Any) -> Any:
        return _line_number(value)


@functools.cache
def words_model(words: tuple[str, ...]) -> type[BaseModel]:
    """The pydantic model of a ``{verdict, summary, issues}`` answer over ``words``.

    One model per vocabulary (building a model takes milliseconds).
    """
    verdict_type: Any = Literal[tuple(words)] if words else str
    return create_model(
        "WordsAnswer",
        __config__=ConfigDict(extra="forbid", frozen=True),
        verdict=(verdict_type, ...),
        summary=(str, ""),
        issues=(list[WordIssue], Field(default_factory=list)),
    )


class WordsReader(VerdictReader):
    """A verdict word of the reviewer's vocabulary, with high/medium/low issues."""

    name = "words"

    def schema(self, ctx: ReadContext) -> dict[str, Any]:
        return strict_schema(words_model(ctx.words))

    def _verdict(self, data: BaseModel, source: str, ctx: ReadContext) -> Verdict:
        values = data.model_dump()
        issues = tuple(Issue(**i) for i in values["issues"])
        word = str(values["verdict"])
        if word in ctx.pass_words and any(i.blocking for i in issues):
            # An approval listing a high-severity issue is not approval: it is the first
            # word mapped to ``revise``, or ``UNCLEAR`` (never ``pass``) when none is.
            word = ctx.revise_word or UNCLEAR
        return Verdict(word=word, issues=issues, summary=str(values["summary"]), source=source)

    def read(self, result: AgentResult, ctx: ReadContext) -> Verdict:
        model = words_model(ctx.words)
        if result.structured is not None:
            found = _validate(model, result.structured)
            if found is not None:
                return self._verdict(found, "structured", ctx)
            return _mismatch(model, result.structured)
        document = json_document(result.text)
        found = _validate(model, document)
        if found is not None:
            approving = getattr(found, "verdict", None) in ctx.pass_words
            if approving and _disagrees(model, result.text, found, "verdict"):
                return unclear(DISAGREEING)
            return self._verdict(found, "json-text", ctx)
        if ctx.structured_enforced or result.cut_off:
            return unclear(_free_text(result))
        if approval_naming_a_problem(result.text):
            return _approval_naming_a_problem(result.text)
        said = first_line_word(result.text, ctx.words)
        if isinstance(document, Mapping) and (said is None or _names_field(document, "verdict")):
            return unclear(
                "The reviewer's JSON answer does not match the verdict schema "
                f"({schema_mismatch(model, document)}); treated as not approved."
            )
        if said is None:
            return unclear(
                "The reviewer's answer could not be read as a verdict; treated as not approved."
            )
        word, rest = said
        if word in ctx.pass_words and names_a_problem(rest):
            # "APPROVED" followed by a named blocker or issue is not an approval.
            return _approval_naming_a_problem(result.text)
        issues: tuple[Issue, ...] = ()
        if word not in ctx.pass_words and rest:
            issues = (Issue(severity="medium", description=rest),)
        return Verdict(word=word, issues=issues, summary=rest or word, source="first-line")

    def approving(self, word: str, ctx: ReadContext) -> Mapping[str, Any]:
        return {"verdict": word, "summary": f"auto: {word}", "issues": []}


# -- fuzzy: seed 004 ------------------------------------------------------------------


class FuzzyReader(VerdictReader):
    """Seed 004's fuzzy approval detection (a JSON verdict in the answer wins), with one
    rule more: a first-line approval whose rest names a blocker or an issue is unclear.

    Structured output and a JSON object in the answer are read first (any other JSON
    value, such as ``-1``, is free text); free text then goes through
    :func:`~phasegate.verdicts.text.detect_review_status`.
    """

    name = "fuzzy"
    words = ("APPROVED", "NEEDS_REVISION")

    def schema(self, ctx: ReadContext) -> dict[str, Any]:
        return strict_schema(words_model(("APPROVED", "NEEDS_REVISION")))

    def read(self, result: AgentResult, ctx: ReadContext) -> Verdict:
        inner = ReadContext(
            words=("APPROVED", "NEEDS_REVISION"),
            pass_words=frozenset({"APPROVED"}),
            revise_word="NEEDS_REVISION",
            structured_enforced=ctx.structured_enforced,
        )
        # Only a JSON object is a structured answer: ``-1`` (a JSON number) is free text,
        # seed 004's REVISION_PATTERNS' ``/^-1$/``.
        if result.structured is not None or isinstance(json_document(result.text), Mapping):
            return WordsReader().read(result, inner)
        if ctx.structured_enforced or result.cut_off:
            return unclear(_free_text(result))
        if approval_naming_a_problem(result.text):
            return _approval_naming_a_problem(result.text)
        status = detect_review_status(result.text)
        text = result.text.strip()
        if status == UNCLEAR:
            return unclear(
                "The reviewer's answer is unclear (neither an approval nor a revision request)."
            )
        first, _, rest = text.partition("\n")
        if status == "APPROVED":
            return Verdict(word="APPROVED", summary=text, source="fuzzy")
        # After a NEEDS_REVISION first line the rest is the feedback; an answer read
        # from its implicit signals is feedback as a whole.
        said = any(p.search(first_line(result.text)) for p in REVISION_PATTERNS)
        feedback = (rest.strip() or first.strip()) if said else text
        issue = Issue(severity="high", description=feedback)
        return Verdict(
            word="NEEDS_REVISION", issues=(issue,), summary=first.strip(), source="fuzzy"
        )

    def approving(self, word: str, ctx: ReadContext) -> Mapping[str, Any]:
        return {"verdict": word, "summary": f"auto: {word}", "issues": []}


APPROVED_WITH_PROBLEM = (
    "The reviewer's answer approves on its first line but goes on to name a blocker or an "
    "issue; treated as not approved."
)
#: Seed 000's structured verdict that approves while naming a blocker (``{n}``: how many).
APPROVED_WITH_BLOCKERS = (
    "(The reviewer approved, but named a blocker ({n}); an approval needs none: "
    "treated as not approved.)"
)
#: Seed 000's structured verdict that rejects with no issue and no summary.
NO_REASON = "The reviewer did not approve and gave no reason (no issue, no summary)."


#: How much of an unreadable answer its blocker keeps.
KEPT_WORDS = 1000


def _keeping_words(verdict: Verdict, text: str) -> Verdict:
    """An unclear verdict whose blocker keeps what the reviewer said (on a line of its
    own, clipped): the executor revising and the review history see the reviewer's words."""
    said = " ".join(text.split())
    if not said or not verdict.issues:
        return verdict
    if len(said) > KEPT_WORDS:
        said = said[:KEPT_WORDS] + "…"
    first = verdict.issues[0]
    kept = first.model_copy(
        update={"description": f"{first.description}\nThe reviewer said: {said}"}
    )
    return verdict.model_copy(update={"issues": (kept, *verdict.issues[1:])})


def _approval_naming_a_problem(text: str) -> Verdict:
    """Unclear, with what the reviewer went on to say as the feedback (on the approving
    line too: ``✅ but the tests fail`` says ``but the tests fail``)."""
    rest = (after_approval(text.strip()) or "").strip()
    found = unclear(APPROVED_WITH_PROBLEM)
    if not rest:
        return found
    said = Issue(severity="blocker", description=rest)
    return found.model_copy(update={"issues": (*found.issues, said)})


FREE_TEXT = (
    "The reviewer's answer could not be read as a verdict: it was asked for a structured "
    "verdict and answered in free text; treated as not approved."
)


def _free_text(result: AgentResult) -> str:
    """Why an answer that holds no complete verdict was not read as one."""
    if result.cut_off:
        return (
            f"The reviewer's answer could not be read as a verdict: {result.cut_off}; "
            "treated as not approved."
        )
    return FREE_TEXT


def schema_text(schema: Mapping[str, Any]) -> str:
    """How a prompt states a schema the backend does not enforce itself."""
    return (
        "Answer with only a JSON object matching this schema.\n\n```json\n"
        + json.dumps(schema, indent=2)
        + "\n```"
    )


APPROVAL = ApprovalReader()
WORDS = WordsReader()
FUZZY = FuzzyReader()
