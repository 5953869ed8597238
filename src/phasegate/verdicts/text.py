"""Reading free text conservatively: JSON documents, first-line words, seed 004's fuzzy rules."""

from __future__ import annotations

import json
import re
from typing import Any

from markdown_it import MarkdownIt

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
ISSUE_WORDS = re.compile(r"\b(issue|problem|error|bug|wrong|incorrect|missing)\b")
APPROVAL_WORDS = re.compile(r"\b(good|great|excellent|perfect|works|correct)\b")
#: Words that name a problem in the rest of an answer whose first line approves.
_PROBLEM_AFTER_APPROVAL = re.compile(
    r"\b(blockers?|issues?|problems?|errors?|bugs?|wrong|incorrect|missing|must fix|fails?)\b",
    re.I,
)
_NEGATED = re.compile(
    r"\b(no|not any|without|zero|none of the)\s+(\w+\s+){0,2}?"
    r"(blockers?|issues?|problems?|errors?|bugs?)\b",
    re.I,
)

_md = MarkdownIt("commonmark")


def json_document(text: str) -> Any | None:
    """The JSON value ``text`` holds: the whole answer, or its final fenced ``json`` block.

    Never a span cut out of prose (from the first ``{`` to the last ``}``): an
    answer that quotes an artifact's ``{"approved": true}`` while rejecting in
    prose must not be read as that quote.
    """
    stripped = text.strip()
    if not stripped:
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    fences = [t for t in _md.parse(stripped) if t.type == "fence"]
    if not fences:
        return None
    last = fences[-1]
    if last.info.strip().lower() not in ("json", ""):
        return None
    try:
        return json.loads(last.content)
    except ValueError:
        return None


def first_line_word(text: str, words: tuple[str, ...]) -> tuple[str, str] | None:
    """``(word, rest)`` when the first line is one of ``words`` (``Verdict: APPROVED`` too)."""
    stripped = text.strip()
    if not stripped or not words:
        return None
    first, _, rest = stripped.partition("\n")
    alternatives = "|".join(
        re.escape(w).replace(r"\ ", r"[\s_]+").replace("_", r"[\s_]+")
        for w in sorted(words, key=len, reverse=True)
    )
    pattern = re.compile(rf"^\W*(?:verdict\s*[:=-]\s*)?\W*({alternatives})\W*$", re.I)
    match = pattern.match(first.strip())
    if match is None:
        return None
    said = re.sub(r"[\s_]+", " ", match.group(1).upper())
    for word in words:
        if re.sub(r"[\s_]+", " ", word.upper()) == said:
            return word, rest.strip()
    return None


def fuzzy_status(text: str, *, implicit_approval: bool = True) -> str:
    """Seed 004's ``detectReviewStatus``: APPROVED, NEEDS_REVISION or UNCLEAR.

    The first line is matched against the approval then the revision
    patterns; otherwise the implicit signals decide (issue words without
    approval words: revision; approval words without issue words: approval,
    unless ``implicit_approval`` is off, when praise alone is UNCLEAR). One
    rule is added: a first line that approves while the rest of the answer
    names a blocker or an issue is UNCLEAR, never an approval.
    """
    first = text.split("\n", 1)[0].strip()
    rest = text.split("\n", 1)[1] if "\n" in text else ""
    for pattern in APPROVAL_PATTERNS:
        if pattern.search(first):
            return "UNCLEAR" if names_a_problem(rest) else "APPROVED"
    for pattern in REVISION_PATTERNS:
        if pattern.search(first):
            return "NEEDS_REVISION"
    lower = text.lower()
    has_issues = bool(ISSUE_WORDS.search(lower))
    has_approval = bool(APPROVAL_WORDS.search(lower))
    if has_issues and not has_approval:
        return "NEEDS_REVISION"
    if has_approval and not has_issues and implicit_approval:
        return "APPROVED"
    return "UNCLEAR"


def approval_naming_a_problem(text: str) -> bool:
    """Whether ``text``'s first line approves while the rest names a blocker or an issue."""
    first, _, rest = text.strip().partition("\n")
    return any(p.search(first.strip()) for p in APPROVAL_PATTERNS) and names_a_problem(rest)


def names_a_problem(text: str) -> bool:
    """Whether ``text`` names a blocker or an issue (``no issues found`` does not)."""
    without_negations = _NEGATED.sub(" ", text)
    return bool(_PROBLEM_AFTER_APPROVAL.search(without_negations))
