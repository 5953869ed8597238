"""Answers to an escalated or aborted task: the command a message suggests works pasted,
and `--answer` names only the choices escalation.actions offers (exit 2 otherwise)."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import PLAN, cli
from test_implement_cli import SIGN, scripted_repo

REJECTING = {
    "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
    "*": {"*": [{"text": "NEEDS_REVISION\nCompare the signature in constant time."}]},
}
LIMITED = {"actions": ["skip_with_warning", "abort_process"], "default_action": "abort_process"}


def test_answer_naming_a_choice_escalation_actions_removed_is_refused_as_bad_input(
    tmp_path: Path,
) -> None:
    """`implement 006 -a escalate-X=accept_as_is` without accept_as_is in escalation.actions:
    exit 2, one line naming the answer, the decision and only the choices offered."""
    root = scripted_repo(tmp_path, REJECTING, max_cycles=1, escalation=LIMITED)
    assert cli(root, "implement", "006", "-q").returncode == 3
    refused = cli(root, "implement", "006", "-q", "-a", f"escalate-{SIGN}=accept_as_is")
    assert refused.returncode == 2, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert lines[0].startswith("phasegate: error: 'accept_as_is' is not"), lines[0]
    assert f"escalate-{SIGN}" in lines[0]
    assert "choices: manual_fix, skip_with_warning, abort_process, default" in lines[0]
    assert lines[0].count("accept_as_is") == 1, lines[0]
    assert "- [ ] **Sign outgoing payloads**" in (root / PLAN).read_text()
    # The decision still waits, and an offered choice answers it.
    taken = cli(root, "implement", "006", "-q", "-a", f"escalate-{SIGN}=skip_with_warning")
    assert taken.returncode == 0, taken.stderr
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()


def test_the_command_an_abort_suggests_works_pasted(tmp_path: Path) -> None:
    """The aborted task's message suggests one answer (`retry`) and names the other choices
    in words: run as printed by a shell, it records `retry` and nothing else."""
    root = scripted_repo(tmp_path, REJECTING, max_cycles=1, escalation=LIMITED)
    assert cli(root, "implement", "006", "-q").returncode == 3
    assert cli(root, "answer", "006", f"escalate-{SIGN}", "abort_process").returncode == 0
    aborted = cli(root, "implement", "006", "-q")
    assert aborted.returncode == 4, aborted.stderr
    message = aborted.stderr.strip()
    assert "|" not in message, message
    command = f"phasegate answer 006 aborted-{SIGN} retry"
    assert command in message, message
    assert "skip_with_warning" in message
    assert "accept_as_is" not in message
    assert f"{command} (choices: retry, skip_with_warning)," in message


def test_an_abort_with_every_action_names_each_other_choice(tmp_path: Path) -> None:
    root = scripted_repo(
        tmp_path, REJECTING, max_cycles=1, escalation={"default_action": "abort_process"}
    )
    assert cli(root, "implement", "006", "-q").returncode == 3
    aborted = cli(root, "implement", "006", "-q", "-a", f"escalate-{SIGN}=abort_process")
    assert aborted.returncode == 4, aborted.stderr
    message = aborted.stderr.strip()
    assert "|" not in message, message
    assert f"phasegate answer 006 aborted-{SIGN} retry" in message
    assert "skip_with_warning" in message and "accept_as_is" in message
