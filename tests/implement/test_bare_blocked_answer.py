"""An implementer answering a bare ``BLOCKED`` (no colon, no reason: seed 004's
``/^BLOCKED$/i``) is blocked like one answering ``BLOCKED: reason``: a person is asked at
``blocked-<task>``, and the task is not reviewed and ticked done."""

from __future__ import annotations

import json

import pytest
from implement_helpers import PLAN, cli
from test_implement_cli import SIGN, scripted_repo


@pytest.mark.parametrize(
    "answer",
    ["BLOCKED", "blocked.", "**BLOCKED**", "BLOCKED\nthe key format is not specified"],
)
def test_a_bare_blocked_answer_asks_a_person(tmp_path, answer: str) -> None:
    script = {
        "the-developer": {"implement": [{"text": answer}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script)
    first = cli(root, "implement", "006")
    said = first.stdout + first.stderr
    assert first.returncode == 3, said
    assert f"blocked-{SIGN}: Task 'Sign outgoing payloads'" in said, said
    reason = "the key format is not specified" if "\n" in answer else "no reason given"
    assert f"answered BLOCKED: {reason}" in said, said
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert (row["state"], row["decision"]) == ("agent blocked", f"blocked-{SIGN}"), row
    assert "- [x]" not in (root / PLAN).read_text()


def test_a_line_only_starting_with_the_word_is_no_block(tmp_path) -> None:
    """``Blocked requests are now retried`` is a report of work done, not a block."""
    script = {
        "the-developer": {
            "implement": [{"write": {"src/sign.py": "x = 1\n"}, "text": "Blocked calls retry"}]
        },
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script)
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stdout + done.stderr
