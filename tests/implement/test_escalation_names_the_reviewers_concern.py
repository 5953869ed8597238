"""An escalated task's question says what its reviewer still asks for, not only the verdict
word: a free-text `NEEDS_REVISION` whose concern is on the next line is escalated with that
concern, so the person deciding (accept, fix, skip, abort) knows what is wrong."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import cli
from test_implement_cli import SIGN, scripted_repo

CONCERN = "Add rate limiting to the endpoint."


def test_the_escalation_question_names_the_reviewers_concern(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": f"NEEDS_REVISION\n{CONCERN}"}]},
    }
    root = scripted_repo(tmp_path, script, max_cycles=1)
    waiting = cli(root, "implement", "006", "-q")
    assert waiting.returncode == 3, waiting.stderr
    line = waiting.stderr.strip().splitlines()[-1]
    assert f"still NEEDS_REVISION after 1 review cycle(s): {CONCERN}" in line, line
    asked = cli(root, "decisions", "006").stdout
    assert f"escalate-{SIGN}" in asked and CONCERN in asked, asked
