"""Seed 004's Fuzzy Approval Detection (Status Detection Patterns): the first line against
APPROVAL_PATTERNS then REVISION_PATTERNS, then the implicit signals; UNCLEAR otherwise."""

from __future__ import annotations

import pytest

from phasegate.agents.base import AgentResult
from phasegate.verdicts.readers import FUZZY, ReadContext
from phasegate.verdicts.text import detect_review_status

APPROVALS = [
    "APPROVED",
    "approved",
    "LOOKS GOOD",
    "looks   good",
    "LGTM",
    "lgtm",
    "SHIP IT",
    "Ship\tIt",
    "+1",
    "READY TO MERGE",
    "ready to ship",
    "ALL GOOD",
    "Passed Review",
    "✅ nice",
    "👍",
]
REVISIONS = [
    "NEEDS_REVISION",
    "needs revision",
    "REQUIRES CHANGES",
    "require change",
    "NEEDS WORK",
    "need work",
    "NOT READY",
    "-1",
    "BLOCKED",
    "fix required",
    "❌ broken",
    "👎",
]


@pytest.mark.parametrize("first", APPROVALS)
def test_every_approval_pattern_approves_on_the_first_line(first: str) -> None:
    """APPROVAL_PATTERNS on the trimmed first line: APPROVED, whatever follows."""
    assert detect_review_status(f"  {first}  \nA bug here would not matter.") == "APPROVED"


@pytest.mark.parametrize("first", REVISIONS)
def test_every_revision_pattern_asks_for_revision(first: str) -> None:
    """REVISION_PATTERNS on the first line: NEEDS_REVISION, even after praise below."""
    assert detect_review_status(f"{first}\nOtherwise great work.") == "NEEDS_REVISION"


@pytest.mark.parametrize("first", [a for a in APPROVALS if "good" not in a.lower()])
def test_an_approval_pattern_below_the_first_line_does_not_approve(first: str) -> None:
    """Only the first line is matched: a pattern further down is just text."""
    assert detect_review_status(f"Review notes\n{first}") == "UNCLEAR"


@pytest.mark.parametrize("first", REVISIONS)
def test_a_revision_pattern_below_the_first_line_is_not_read_as_one(first: str) -> None:
    """A revision word further down is not a first-line revision (implicit rules decide)."""
    assert detect_review_status(f"Looks great to me\n{first}") == "APPROVED"


@pytest.mark.parametrize("first", ["APPROVED with comments", "LGTM!", "NEEDS_REVISION please"])
def test_anchored_patterns_need_the_whole_line(first: str) -> None:
    """The seed's patterns are anchored with ^ and $: extra words fall to the implicit rules."""
    assert detect_review_status(first) == "UNCLEAR"


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("The retry loop has a bug when the queue is empty.", "NEEDS_REVISION"),
        ("Missing tests for the signer.", "NEEDS_REVISION"),
        ("The code works and the tests are excellent.", "APPROVED"),
        ("Great work, but there is a bug in the backoff.", "UNCLEAR"),
        ("Add rate limiting", "UNCLEAR"),
        ("", "UNCLEAR"),
        ("Some thoughts follow.\nNothing decisive.", "UNCLEAR"),
    ],
)
def test_implicit_signals_decide_without_a_pattern(text: str, status: str) -> None:
    """Issue words alone: revision; approval words alone: approval; both or neither: UNCLEAR."""
    assert detect_review_status(text) == status


@pytest.mark.parametrize("text", ["ſhip it", "PAſſED REVIEW", "BLOC\u212aED"])
def test_case_folding_is_ascii_only_as_in_javascript(text: str) -> None:
    """JavaScript's /i without u never lets ſ or the Kelvin sign stand in for s or k."""
    assert detect_review_status(text) == "UNCLEAR"


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\ufeff", "\u3000"])
def test_javascript_whitespace_is_trimmed_and_matched(space: str) -> None:
    """trim() and \\s are JavaScript's: no-break, em and ideographic spaces, the BOM."""
    assert detect_review_status(f"{space}LOOKS{space}GOOD{space}") == "APPROVED"


def read(text: str, enforced: bool = False) -> tuple[str, str]:
    verdict = FUZZY.read(AgentResult(text=text), ReadContext(structured_enforced=enforced))
    return verdict.word, " ".join(i.description for i in verdict.issues)


def test_the_fuzzy_reader_turns_a_revision_into_its_feedback() -> None:
    """After NEEDS_REVISION, the rest of the answer is the feedback sent back to the agent."""
    assert read("NEEDS_REVISION\nAdd rate limiting to the login endpoint.") == (
        "NEEDS_REVISION",
        "Add rate limiting to the login endpoint.",
    )


def test_the_fuzzy_reader_keeps_an_implicit_revision_whole() -> None:
    """An answer read from its implicit signals is the feedback as a whole."""
    word, feedback = read("Two things.\nThe token check has a bug.")
    assert word == "NEEDS_REVISION" and feedback == "Two things.\nThe token check has a bug."


def test_unclear_is_never_approval() -> None:
    """UNCLEAR: requires user clarification (it never maps to approval)."""
    assert read("Great work, but one bug.")[0] == "UNCLEAR"


def test_a_json_verdict_is_preferred_to_fuzzy_text() -> None:
    """Structured verdicts are preferred: a JSON verdict wins over the words around it."""
    text = '{"verdict": "NEEDS_REVISION", "summary": "LGTM otherwise", "issues": []}'
    assert read(text)[0] == "NEEDS_REVISION"


def test_free_text_from_a_schema_enforcing_backend_is_unclear() -> None:
    """A backend made to answer in a schema that answers prose is not read fuzzily."""
    assert read("LGTM", enforced=True)[0] == "UNCLEAR"


@pytest.mark.parametrize(
    ("text", "feedback"),
    [
        ("-1", "-1"),
        ("-1\nCompare signatures in constant time.", "Compare signatures in constant time."),
    ],
)
def test_minus_one_is_a_revision_not_a_json_number(text: str, feedback: str) -> None:
    """REVISION_PATTERNS' /^-1$/: only a JSON object is a structured answer, so `-1` (valid
    JSON, a number) is free text and asks for a revision, as `+1` approves."""
    assert read(text) == ("NEEDS_REVISION", feedback)
    assert read("+1")[0] == "APPROVED"


def test_a_fenced_json_value_that_is_no_object_leaves_the_text_to_the_fuzzy_rules() -> None:
    """A fenced JSON list is not a verdict: the first line decides."""
    text = 'NEEDS_REVISION\nThe failing inputs:\n\n```json\n["", "\\u0000"]\n```'
    assert read(text)[0] == "NEEDS_REVISION"


def test_a_first_line_approval_naming_a_bug_is_where_phasegate_is_stricter_than_the_seed() -> None:
    """docs/implement-workflow.md: seed 004's rule approves on the first line whatever follows;
    phasegate reads an approval whose rest names a bug as UNCLEAR (never approval)."""
    text = "APPROVED\nBut there is a critical bug: missing rate limiting."
    assert detect_review_status(text) == "APPROVED"  # the seed's own function, exactly
    word, feedback = read(text)
    assert word == "UNCLEAR"
    assert feedback.endswith("But there is a critical bug: missing rate limiting.")
