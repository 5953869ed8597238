"""The answer command phasegate suggests for a gate whose suggested choice needs a note
(``note: required``) carries a note placeholder (``'yes: NOTE'``): the exit-3 message,
``decisions`` and ``status`` all show it, and the command, as shown, is taken."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from test_hostile_text_and_answers import phasegate, setup

from phasegate.engine.answers import answer_command, record_command

GATED = """\
name: gated
items_dir: gitems
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - id: g2
    kind: gate
    question: "Go on?"
    choices:
      yes: {to: g3, note: required}
      no: {to: e}
  - id: g3
    kind: gate
    question: "Really?"
    choices: {ok: {to: e}}
  - id: e
    kind: end
"""

SUGGESTED = "phasegate answer i1 g2 'yes: NOTE'"


def test_answer_command_has_a_note_placeholder_only_where_one_is_needed() -> None:
    assert answer_command("i1", "g2", ["yes", "no"], notes_required=["yes"]) == SUGGESTED
    assert answer_command("i1", "g2", ["yes", "no"]) == "phasegate answer i1 g2 yes"
    assert (
        answer_command("i1", "g2", ["yes", "no"], "no", notes_required=["yes"])
        == "phasegate answer i1 g2 no"
    )
    record = {"id": "g2", "choices": {"yes": "", "no": ""}, "notes_required": ["yes"]}
    assert record_command("i1", record) == SUGGESTED


def test_every_suggested_command_for_a_note_required_choice_is_taken(tmp_path: Path) -> None:
    repo = setup(tmp_path / "repo", "gated", GATED)
    assert phasegate(repo, "new", "i1", "-w", "gated", "-d", "x").returncode == 0
    run = phasegate(repo, "run", "i1")
    assert run.returncode == 3, run.stderr
    assert SUGGESTED in run.stderr
    listed = phasegate(repo, "decisions", "i1")
    assert SUGGESTED in listed.stdout, listed.stdout
    (decision,) = json.loads(phasegate(repo, "decisions", "i1", "--json").stdout)
    assert decision["command"] == SUGGESTED
    status = phasegate(repo, "status", "i1")
    assert SUGGESTED in status.stdout, status.stdout
    (pending,) = json.loads(phasegate(repo, "status", "i1", "--json").stdout)["pendingDecisions"]
    assert pending["command"] == SUGGESTED
    # The command as shown (its placeholder left in) is a valid answer, not a refusal.
    argv = shlex.split(decision["command"])
    assert argv[:2] == ["phasegate", "answer"]
    taken = phasegate(repo, *argv[1:])
    assert taken.returncode == 0, taken.stderr
