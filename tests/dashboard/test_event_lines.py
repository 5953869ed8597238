"""How ``phasegate logs`` and the dashboard show an event without a reading of its own:
``name: key=value, ...``, a long value cut at a word with an ellipsis (a reviewer's
reason used to be cut mid-sentence, leaving ``considering architecture,, cycle=1``)."""

from __future__ import annotations

from phasegate.dashboard.events import EventReader

REASON = (
    "Given that this task involved src/app.py, and considering architecture, the best "
    "agent to review this would be the-architect because of their expertise."
)


def test_a_long_value_is_cut_at_a_word_and_says_so() -> None:
    entry = EventReader().read(
        {"ts": "t", "event": "reviewer.selected", "agent": "the-architect", "reason": REASON}
    )
    assert entry is not None
    reason = entry.what.split("reason=", 1)[1].split(", cycle=", 1)[0]
    assert reason.endswith("…") and len(reason) <= 80
    assert REASON.startswith(reason[:-1]) and not REASON[len(reason) - 1].isalnum()
    assert ",," not in entry.what


def test_short_values_are_whole() -> None:
    entry = EventReader().read({"ts": "t", "event": "x.y", "a": "short", "n": 3})
    assert entry is not None and entry.what == "x.y: a=short, n=3"
