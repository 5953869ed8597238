"""Reading free text conservatively: JSON documents, first-line words, seed 004's fuzzy rules."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

#: JavaScript's white space (``\\s`` and ``String.prototype.trim``): seed 004's rules are
#: JavaScript, so its first line is trimmed and its patterns match exactly as there.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _js(pattern: str, ignore_case: bool = True) -> re.Pattern[str]:
    """A JavaScript regular expression without the ``u`` flag, as Python matches it.

    ``\\s`` is JavaScript's white space; ``/i`` and ``\\b`` are ASCII-only, as they are
    in JavaScript without ``u`` (so ``ſ`` or the Kelvin sign never stand in for a letter).
    """
    escaped = "".join(f"\\u{ord(c):04x}" for c in JS_WHITESPACE)
    flags = re.ASCII | (re.IGNORECASE if ignore_case else 0)
    inside_class = pattern.replace("[\\s_]", f"[{escaped}_]")
    return re.compile(inside_class.replace("\\s", f"[{escaped}]"), flags)


# Seed 004's APPROVAL_PATTERNS and REVISION_PATTERNS, flags as written there.
APPROVAL_PATTERNS = (
    _js(r"^APPROVED$"),
    _js(r"^LOOKS\s+GOOD$"),
    _js(r"^LGTM$"),
    _js(r"^SHIP\s+IT$"),
    _js(r"^\+1$", ignore_case=False),
    _js(r"^READY\s+TO\s+(MERGE|SHIP)$"),
    _js(r"^ALL\s+GOOD$"),
    _js(r"^PASSED\s+REVIEW$"),
    _js(r"^✅", ignore_case=False),
    _js(r"^👍", ignore_case=False),
)
REVISION_PATTERNS = (
    _js(r"^NEEDS[\s_]REVISION$"),
    _js(r"^REQUIRES?\s+CHANGES?$"),
    _js(r"^NEEDS?\s+WORK$"),
    _js(r"^NOT\s+READY$"),
    _js(r"^-1$", ignore_case=False),
    _js(r"^BLOCKED$"),
    _js(r"^FIX\s+REQUIRED$"),
    _js(r"^❌", ignore_case=False),
    _js(r"^👎", ignore_case=False),
)
ISSUE_WORDS = _js(r"\b(issue|problem|error|bug|wrong|incorrect|missing)\b", ignore_case=False)
APPROVAL_WORDS = _js(r"\b(good|great|excellent|perfect|works|correct)\b", ignore_case=False)
#: Words that name a problem in the rest of an answer whose first line approves.
_PROBLEM_AFTER_APPROVAL = re.compile(
    r"\b(blockers?|issues?|problems?|errors?|bugs?|wrong|incorrect|missing|must fix|fails?)\b",
    re.I,
)
_PROBLEM_NOUNS = r"(?:blockers?|issues?|problems?|errors?|bugs?)"
#: Saying there is no problem: ``no issues or blockers``, ``issues: none``, ``nothing is
#: missing``; taken out of the answer before :data:`_PROBLEM_AFTER_APPROVAL` looks at it.
_NEGATED = re.compile(
    rf"\b(?:no|not any|without|zero|none of the)\s+(?:\w+\s+){{0,2}}?{_PROBLEM_NOUNS}\b"
    rf"(?:\s*(?:,|or|and|nor)\s*(?:no\s+)?{_PROBLEM_NOUNS}\b)*"
    rf"|\b{_PROBLEM_NOUNS}(?:\s+found)?\s*:\s*(?:none|0)\b"
    r"|\bnothing\s+(?:is\s+)?(?:missing|wrong|incorrect)\b",
    re.I,
)


@cache
def _markdown() -> MarkdownIt:
    """The Markdown parser, made (and markdown-it imported) the first time an answer needs it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: ``{"approved": false, "approved":
    true}`` says two things, so it is no JSON document here (ValueError)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key is given twice")
    return found


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_once)


def json_document(text: str) -> Any | None:
    """The JSON value ``text`` holds: the whole answer, or its final fenced ``json`` block.

    Never a span cut out of prose (from the first ``{`` to the last ``}``): an
    answer that quotes an artifact's ``{"approved": true}`` while rejecting in
    prose must not be read as that quote. An object giving a key twice is none.
    """
    stripped = text.strip()
    if not stripped:
        return None
    try:
        return _loads(stripped)
    except ValueError:
        pass
    fences = fenced_blocks(stripped)
    if not fences:
        return None
    last = fences[-1]
    if last.info.strip().lower() not in ("json", ""):
        return None
    try:
        return _loads(last.content)
    except ValueError:
        return None


def fenced_blocks(text: str) -> list[Any]:
    """The fenced code blocks of ``text`` (markdown-it tokens), in order."""
    return [t for t in _markdown().parse(text.strip()) if t.type == "fence"]


def fenced_documents(text: str) -> list[Any]:
    """The JSON value of every fenced ``json`` (or unlabelled) block of ``text`` that
    holds one, in order."""
    found = []
    for fence in fenced_blocks(text):
        if fence.info.strip().lower() not in ("json", ""):
            continue
        try:
            found.append(_loads(fence.content))
        except ValueError:
            continue
    return found


#: A question mark (ASCII, full-width, Spanish opening): a verdict word asked is no verdict.
_QUESTION = re.compile("[?\uff1f\u00bf\u2047-\u2049\u2e2e]")


def first_line_word(text: str, words: tuple[str, ...]) -> tuple[str, str] | None:
    """``(word, rest)`` when the first line is one of ``words`` (``Verdict: APPROVED`` too).

    Punctuation around the word is allowed (``APPROVED.``, ``**APPROVED**``), a question
    mark is not: ``APPROVED?`` asks rather than answers, so it is no verdict (unclear).
    """
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
    if match is None or _QUESTION.search(first):
        return None
    said = re.sub(r"[\s_]+", " ", match.group(1).upper())
    for word in words:
        if re.sub(r"[\s_]+", " ", word.upper()) == said:
            return word, rest.strip()
    return None


def first_line(feedback: str) -> str:
    """``feedback.split('\\n')[0].trim()`` as seed 004 writes it (JavaScript's trim)."""
    return feedback.split("\n", 1)[0].strip(JS_WHITESPACE)


def detect_review_status(feedback: str) -> str:
    """Seed 004's ``detectReviewStatus``, exactly: APPROVED, NEEDS_REVISION or UNCLEAR.

    The trimmed first line is tried against every approval pattern, then every
    revision pattern; otherwise the implicit signals of the whole (lower-cased)
    answer decide: issue words without approval words ask for revision,
    approval words without issue words approve, anything else is UNCLEAR
    (which a workflow never maps to approval).
    """
    first = first_line(feedback)
    if any(pattern.search(first) for pattern in APPROVAL_PATTERNS):
        return "APPROVED"
    if any(pattern.search(first) for pattern in REVISION_PATTERNS):
        return "NEEDS_REVISION"
    lower = feedback.lower()
    has_issues = bool(ISSUE_WORDS.search(lower))
    has_approval = bool(APPROVAL_WORDS.search(lower))
    if has_issues and not has_approval:
        return "NEEDS_REVISION"
    if has_approval and not has_issues:
        return "APPROVED"
    return "UNCLEAR"


def after_approval(text: str) -> str | None:
    """What follows the approval on ``text``'s first line, and the lines after it.

    ``None`` when the first line does not approve. ``✅`` and ``👍`` approve as the line's
    first character, so the rest of that line is said after the approval too:
    ``✅ But there is a critical bug`` names a problem as ``APPROVED`` then
    ``But there is a critical bug`` does.
    """
    first = first_line(text)
    for pattern in APPROVAL_PATTERNS:
        match = pattern.search(first)
        if match is not None:
            rest = text.split("\n", 1)[1] if "\n" in text else ""
            return f"{first[match.end() :]}\n{rest}"
    return None


def approval_naming_a_problem(text: str) -> bool:
    """Whether ``text``'s first line approves while the rest (of that line too) names a
    blocker or an issue."""
    rest = after_approval(text)
    return rest is not None and names_a_problem(rest)


def fuzzy_status(text: str, *, implicit_approval: bool = True) -> str:
    """A stricter reading of free text than seed 004's, for readers that want one.

    Seed 004's rules (:func:`detect_review_status`) with two changes: praise alone
    is UNCLEAR unless ``implicit_approval``, and a first line that approves while
    the rest of the answer (of that line too) names a blocker or an issue is UNCLEAR,
    never approval.
    """
    status = detect_review_status(text)
    rest = after_approval(text)
    if status == "APPROVED" and rest is not None:
        return "UNCLEAR" if names_a_problem(rest) else "APPROVED"
    if status == "APPROVED" and not implicit_approval:
        return "UNCLEAR"
    return status


def names_a_problem(text: str) -> bool:
    """Whether ``text`` names a blocker or an issue (``no issues found`` does not)."""
    without_negations = _NEGATED.sub(" ", text)
    return bool(_PROBLEM_AFTER_APPROVAL.search(without_negations))
