"""An escalation's question names only the choices escalation.actions leaves (seed 004:
User Escalation Timeout Configuration), as the answer command's choices do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, cli
from test_implement_cli import SIGN, scripted_repo

REJECTING = {
    "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
    "*": {"*": [{"text": "NEEDS_REVISION\nCompare the signature in constant time."}]},
}
INTRO = (
    "phasegate: waiting: Task 'Sign outgoing payloads' (docs/specs/006-webhooks/PLAN.md:5) "
    "is escalated: still NEEDS_REVISION after 1 review cycle(s): Compare the signature in "
    "constant time. "
)


@pytest.mark.parametrize(
    ("escalation", "asked"),
    [
        ({}, "Accept it as is, fix it by hand, skip it with a warning, or abort?"),
        (
            {"actions": ["skip_with_warning", "abort_process"]},
            "Fix it by hand, skip it with a warning, or abort?",
        ),
        (
            {"actions": ["accept_as_is"], "default_action": "accept_as_is"},
            "Accept it as is, or fix it by hand?",
        ),
        (
            {"actions": ["skip_with_warning"], "timeout_minutes": 0},
            "Fix it by hand, or skip it with a warning?",
        ),
    ],
)
def test_the_question_names_only_the_choices_offered(
    tmp_path: Path, escalation: dict[str, Any], asked: str
) -> None:
    root = scripted_repo(tmp_path, REJECTING, max_cycles=1, escalation=escalation)
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith(INTRO + asked), result.stderr
    assert f"escalate-{SIGN}" in result.stderr


def test_the_suggested_answer_is_the_configured_default_action(tmp_path: Path) -> None:
    """Not accept_as_is: the answer an escalation suggests (error line, decisions, status)
    is escalation.default_action."""
    root = scripted_repo(tmp_path, REJECTING, max_cycles=1)
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 3, result.stderr
    suggested = f"phasegate answer 006 escalate-{SIGN} skip_with_warning"
    assert suggested in result.stderr
    assert suggested in cli(root, "decisions", "006").stdout
    assert suggested in cli(root, "status", "006", env={"COLUMNS": "200"}).stdout


def test_an_abort_never_offers_an_action_escalation_actions_leaves_out(tmp_path: Path) -> None:
    """actions: [skip_with_warning, abort_process]: once aborted, the task takes retry or
    skip_with_warning; accept_as_is is refused (exit 2) and the plan stays unticked."""
    escalation = {"actions": ["skip_with_warning", "abort_process"]}
    root = scripted_repo(tmp_path, REJECTING, max_cycles=1, escalation=escalation)
    assert cli(root, "implement", "006", "-q").returncode == 3
    assert cli(root, "answer", "006", f"escalate-{SIGN}", "abort_process").returncode == 0
    aborted = cli(root, "implement", "006", "-q")
    assert aborted.returncode == 4, aborted.stderr
    assert f"aborted-{SIGN} retry (choices: retry, skip_with_warning)," in aborted.stderr
    assert "accept_as_is" not in cli(root, "decisions", "006").stdout
    refused = cli(root, "answer", "006", f"aborted-{SIGN}", "accept_as_is")
    assert refused.returncode == 2
    assert "'accept_as_is' is not a choice" in refused.stderr
    assert "- [ ] **Sign outgoing payloads**" in (root / PLAN).read_text()
