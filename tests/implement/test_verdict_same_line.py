"""A review whose first line approves with ✅ or 👍 and names a problem on that same line
is UNCLEAR, as the two-line form is: an answer is never approved by mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from implement_helpers import PLAN, cli
from test_implement_cli import scripted_repo

from phasegate.agents.base import AgentResult
from phasegate.verdicts.readers import FUZZY, ReadContext
from phasegate.verdicts.text import approval_naming_a_problem, fuzzy_status

PARALLEL = """# Plan: Signing

## Phase 1: Signing

**Execution: Parallel**

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Verify incoming payloads** [`agent: the-developer`]
"""


def review_status(root: Path) -> list[str]:
    cycles = json.loads((root / ".the-startup" / "review-cycles.json").read_text())
    tasks = cycles["sessions"]["006"]["tasks"].values()
    return [str(review["status"]) for task in tasks for review in task["reviewers"]]


@pytest.mark.parametrize(
    "answer",
    [
        "✅ But there is a critical bug: missing rate limiting, the tests fail.",
        "✅ shipped, but one problem remains",
        "👍 but the tests fail",
        "👍 looks fine, though the error handling is wrong",
    ],
)
def test_an_approving_emoji_naming_a_problem_on_its_line_is_unclear(answer: str) -> None:
    assert approval_naming_a_problem(answer)
    assert fuzzy_status(answer) == "UNCLEAR"
    verdict = FUZZY.read(AgentResult(text=answer), ReadContext())
    assert verdict.word == "UNCLEAR"


@pytest.mark.parametrize("answer", ["✅ nice", "👍", "✅ no issues found", "👍 all tests pass"])
def test_an_approving_emoji_without_a_problem_still_approves(answer: str) -> None:
    assert not approval_naming_a_problem(answer)
    assert FUZZY.read(AgentResult(text=answer), ReadContext()).word == "APPROVED"


def test_a_same_line_problem_after_a_tick_is_not_approved_by_implement(tmp_path: Path) -> None:
    """`✅ But there is a critical bug: …` stops for a person (exit 3), the task unticked."""
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {
            "*": [
                {"text": "✅ But there is a critical bug: missing rate limiting, the tests fail."}
            ]
        },
    }
    root = scripted_repo(tmp_path, script)
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 3, result.stderr
    assert "unclear-" in result.stderr
    assert "- [ ] **Sign outgoing payloads**" in (root / PLAN).read_text()
    assert review_status(root) == ["UNCLEAR"]


def test_a_same_line_problem_is_not_approved_in_a_parallel_phase(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "✅ shipped, but one problem remains"}]},
    }
    root = scripted_repo(tmp_path, script, plan=PARALLEL)
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 3, result.stderr
    plan = (root / PLAN).read_text()
    assert "- [x]" not in plan, plan
    assert review_status(root) == ["UNCLEAR", "UNCLEAR"]
