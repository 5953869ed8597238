"""The ``words`` reader's free-text first line: a verdict word asked as a question is not a
verdict (unclear, never approval); ordinary trailing punctuation still reads as the word.
"""

from __future__ import annotations

import pytest

from phasegate.agents.base import AgentResult
from phasegate.verdicts import ReadContext
from phasegate.verdicts.readers import APPROVAL, WORDS
from phasegate.verdicts.text import first_line_word

CONTEXT = ReadContext(
    words=("APPROVED", "FIX", "OK"),
    pass_words=frozenset({"APPROVED", "OK"}),
    revise_word="FIX",
)


@pytest.mark.parametrize(
    "text",
    [
        "APPROVED?\nI could not open out.txt, so I cannot judge it.",
        "APPROVED???",
        "OK?",
        "approved ?",
        "Verdict: APPROVED?",
        "**APPROVED?**",
        "APPROVED?!",
        "APPROVED!?",
        "APPROVED\uff1f",  # a full-width question mark
        "\u00bfAPPROVED?",
    ],
)
def test_a_verdict_word_asked_as_a_question_is_unclear(text: str) -> None:
    """Unclear never means approved: ``APPROVED?`` asks, it does not approve."""
    verdict = WORDS.read(AgentResult(text=text), CONTEXT)
    assert verdict.unclear and verdict.word not in CONTEXT.pass_words
    assert first_line_word(text, CONTEXT.words) is None


def test_the_approval_reader_agrees_on_a_question() -> None:
    text = "APPROVED?\nI could not open out.txt, so I cannot judge it."
    assert APPROVAL.read(AgentResult(text=text), ReadContext()).unclear
    assert WORDS.read(AgentResult(text=text), CONTEXT).unclear


def test_a_revise_word_asked_as_a_question_is_unclear_too() -> None:
    """``FIX?`` is no verdict either (unclear is mapped, and never to pass)."""
    verdict = WORDS.read(AgentResult(text="FIX?\nmaybe the README"), CONTEXT)
    assert verdict.unclear


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("APPROVED", "APPROVED"),
        ("APPROVED.", "APPROVED"),
        ("APPROVED:", "APPROVED"),
        ("APPROVED!", "APPROVED"),
        ("**APPROVED**", "APPROVED"),
        ("Verdict: APPROVED", "APPROVED"),
        ("OK.", "OK"),
        ("FIX:\nthe README is missing", "FIX"),
    ],
)
def test_ordinary_trailing_punctuation_still_reads_as_the_word(text: str, word: str) -> None:
    verdict = WORDS.read(AgentResult(text=text), CONTEXT)
    assert verdict.word == word and not verdict.unclear
