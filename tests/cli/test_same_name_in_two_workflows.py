"""An item name two workflows have: every command phasegate suggests for either item names
its workflow, so that running the suggestion picks the item instead of failing with
"pick one with --workflow"; a name only one workflow has keeps its short command."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, new_repo, phasegate

from phasegate.integrations.claude_code.hook import session_context
from phasegate.suggested_commands import with_workflow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """``ITEM`` in the feature workflow, with the review-loop example workflow beside it."""
    root = new_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--example", "review-loop").returncode == 0
    return root


def _new_in_review_loop(repo: Path, name: str = ITEM) -> str:
    created = phasegate(repo, "new", name, "-w", "review-loop", "-d", "the other one")
    assert created.returncode == 0, created.stderr
    return created.stdout


def _next_column(table: str) -> dict[tuple[str, str], str]:
    """``(item, workflow)`` to the next command, from the status table."""
    rows = {}
    for line in table.splitlines()[1:]:
        name, workflow, _status, _phase, *command = line.split()
        rows[name, workflow] = " ".join(command)
    return rows


def _run(repo: Path, command: str, *extra: str) -> int:
    """Run a command phasegate suggested, as a person would paste it."""
    program, *args = shlex.split(command)
    assert program == "phasegate"
    done = phasegate(repo, *args, *extra)
    assert "pick one with --workflow" not in done.stderr
    return done.returncode


def test_new_suggests_a_run_naming_the_workflow_when_another_has_the_name(repo: Path) -> None:
    """``new`` of a name the feature workflow has already says how to run the new item."""
    shown = _new_in_review_loop(repo)
    assert f"Next: phasegate run {ITEM} --workflow review-loop" in shown
    unique = _new_in_review_loop(repo, "only-here")
    assert unique.rstrip().endswith("Next: phasegate run only-here")


def test_the_status_table_suggests_commands_that_pick_the_workflow(repo: Path) -> None:
    """Both rows of the shared name get their workflow in the next column, and the
    suggestion runs; a row of a name only one workflow has is unchanged."""
    _new_in_review_loop(repo)
    _new_in_review_loop(repo, "only-here")
    table = phasegate(repo, "status")
    assert table.returncode == 0, table.stderr
    assert _next_column(table.stdout) == {
        (ITEM, "feature"): f"phasegate run {ITEM} --workflow feature",
        (ITEM, "review-loop"): f"phasegate run {ITEM} --workflow review-loop",
        ("only-here", "review-loop"): "phasegate run only-here",
    }
    assert _run(repo, f"phasegate run {ITEM} --workflow feature", "--until", "brainstorm") == 0


def test_status_of_the_item_names_its_workflow_in_the_next_command(repo: Path) -> None:
    """``status NAME -w WORKFLOW`` as text and JSON, and ``status --json`` for every item."""
    _new_in_review_loop(repo)
    shown = phasegate(repo, "status", ITEM, "-w", "review-loop")
    assert shown.returncode == 0, shown.stderr
    assert f"Next: phasegate run {ITEM} --workflow review-loop" in shown.stdout
    one = json.loads(phasegate(repo, "status", ITEM, "-w", "feature", "--json").stdout)
    assert one["nextCommand"] == f"phasegate run {ITEM} --workflow feature"
    every = json.loads(phasegate(repo, "status", "--json").stdout)
    assert {e["workflow"]: e["nextCommand"] for e in every} == {
        "feature": f"phasegate run {ITEM} --workflow feature",
        "review-loop": f"phasegate run {ITEM} --workflow review-loop",
    }


def test_a_run_waiting_on_a_person_says_how_to_go_on_with_the_workflow(repo: Path) -> None:
    """A run of the shared name that stops for a decision names the workflow in what it
    says to do next, and so does the table's answer command, which then works."""
    _new_in_review_loop(repo)
    waiting = phasegate(repo, "run", ITEM, "-w", "feature", "--phase", "design")
    assert waiting.returncode == 3, waiting.stderr
    assert f"phasegate run {ITEM} --workflow feature --phase design --yes" in waiting.stderr
    answer = _next_column(phasegate(repo, "status").stdout)[ITEM, "feature"]
    assert answer == f"phasegate answer {ITEM} --workflow feature transition-warning proceed"
    assert _run(repo, answer) == 0


def test_decisions_and_answer_name_the_workflow_of_a_shared_name(repo: Path) -> None:
    """The answer command ``decisions`` lists (text and JSON, every item or one) and the
    next command ``answer`` prints name the workflow, and both work as pasted."""
    _new_in_review_loop(repo)
    assert phasegate(repo, "run", ITEM, "-w", "feature", "--phase", "design").returncode == 3
    expected = f"phasegate answer {ITEM} --workflow feature transition-warning proceed"
    listed = phasegate(repo, "decisions")
    assert listed.returncode == 0, listed.stderr
    assert f"answer: {expected}" in listed.stdout
    (one,) = json.loads(phasegate(repo, "decisions", ITEM, "-w", "feature", "--json").stdout)
    assert one["command"] == expected
    answered = phasegate(repo, *shlex.split(expected)[1:])
    assert answered.returncode == 0, answered.stderr
    assert f"Next: phasegate run {ITEM} --workflow feature --phase design" in answered.stdout
    assert _run(repo, f"phasegate run {ITEM} --workflow feature --phase design") == 0


def test_new_of_an_existing_shared_name_says_how_to_continue_that_one(repo: Path) -> None:
    """ "already exists; continue it with ..." names the workflow, and the command works."""
    _new_in_review_loop(repo)
    again = phasegate(repo, "new", ITEM, "-w", "review-loop", "-d", "again")
    assert again.returncode == 2
    suggested = f"phasegate run {ITEM} --workflow review-loop"
    assert f"continue it with '{suggested}'" in again.stderr
    assert _run(repo, f"phasegate status {ITEM} --workflow review-loop") == 0


def test_a_waiting_run_prints_an_answer_command_naming_the_workflow(repo: Path) -> None:
    """``run --wait`` at a decision prints the command to answer it; pasted elsewhere, it
    answers this item's decision and the waiting run goes on."""
    _new_in_review_loop(repo)
    waiting = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "phasegate",
            "run",
            ITEM,
            "-w",
            "feature",
            "--phase",
            "design",
            "--wait",
        ],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert waiting.stderr is not None
        lines = []
        for line in waiting.stderr:
            lines.append(line)
            if "waiting for an answer:" in line:
                break
        command = lines[-1].split("waiting for an answer:", 1)[1].strip()
        expected = f"phasegate answer {ITEM} --workflow feature transition-warning proceed"
        assert command == expected, "".join(lines)
        assert _run(repo, command) == 0
        # The waiting run takes the answer and goes on into the design phase.
        went_on = next(line for line in waiting.stderr if "design" in line)
        assert went_on.startswith("▶ design"), went_on
    finally:
        waiting.kill()
        waiting.wait()


def test_the_session_start_hook_names_the_workflow_of_a_shared_name(repo: Path) -> None:
    """The context Claude Code sessions get tells the next command of each item of a shared
    name with its workflow; a name only one workflow has keeps its short command."""
    _new_in_review_loop(repo)
    _new_in_review_loop(repo, "only-here")
    context = session_context({"cwd": str(repo)}, environ={})
    assert f"- Next command: phasegate run {ITEM} --workflow feature" in context
    assert f"- Next command: phasegate run {ITEM} --workflow review-loop" in context
    assert "- Next command: phasegate run only-here\n" in context + "\n"
    assert f"phasegate run {ITEM}\n" not in context + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("phasegate run dup", "phasegate run dup --workflow wf"),
        (
            "fix the block, then: phasegate run dup",
            "fix the block, then: phasegate run dup --workflow wf",
        ),
        (
            "phasegate answer dup gate yes",
            "phasegate answer dup --workflow wf gate yes",
        ),
        ("phasegate run dup --workflow wf", "phasegate run dup --workflow wf"),
        ("phasegate run dup2", "phasegate run dup2"),
        ("phasegate run dup.x", "phasegate run dup.x"),
        ("phasegate implement dup", "phasegate implement dup"),
        ("nothing: the item is complete", "nothing: the item is complete"),
    ],
)
def test_only_commands_that_take_a_workflow_and_name_the_item_get_it(
    text: str, expected: str
) -> None:
    """The item's own name (not a longer one), once, and only where the command takes
    --workflow (``implement`` knows its workflow)."""
    assert with_workflow(text, "dup", "wf") == expected
