"""A reviewer's answer cut off at the token limit, journaled, then reused by a resumed run
(the first run killed after the call returned): the resumed run still says the answer was
cut off at the token limit, and which setting asks for more, not that the reviewer
"answered in free text". Old journal events without the fields still load."""

from __future__ import annotations

from pathlib import Path

from test_reviewer_cut_off_at_token_limit import _repo, cut_off_server

from cli_process import run_cli
from phasegate.agents.base import AgentResult
from phasegate.engine.call_results import result_from_event, result_to_event


def test_a_resumed_run_reusing_a_cut_off_review_names_the_token_limit(tmp_path: Path) -> None:
    with cut_off_server() as url:
        root = _repo(tmp_path / "repo", url, ", max_tokens: 16")
        # Killed right after the critic's answer (the second call) was journaled.
        crash = {"PHASEGATE_CRASH_AT": "agent.returned@2"}
        killed = run_cli(root, "run", "limits", "--until", "planning", env=crash)
        assert killed.returncode == -9, killed.stderr
        # The resumed run reuses the journaled answer of iteration 1.
        resumed = run_cli(root, "run", "limits", "--until", "planning")
    output = resumed.stdout + resumed.stderr
    assert "not dispatched again" in output, output
    first = output.split("iteration 1: not approved", 1)[1].split("iteration 2:", 1)[0]
    assert "raise backends.openai.max_tokens, now 16" in first, output
    assert "answered in free text" not in first, output


def test_the_journal_keeps_cut_off_and_permanent() -> None:
    result = AgentResult(text="{", cut_off="cut", permanent=True, exit_status=1, error="no")
    again = result_from_event(result_to_event(result))
    assert again.cut_off == "cut" and again.permanent is True
    old = result_from_event({"text": "x", "exit_status": 0})
    assert old.cut_off is None and old.permanent is False
