"""``phasegate plan / impl / archive / change`` as a user runs them: subprocesses, no terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from change_helpers import changes, complete
from ruamel.yaml import YAML

from phasegate.errors import ExitCode

PROPOSAL = "---\nchange_id: add-oauth\nspecs: []\n---\n# Proposal\nOAuth.\n"
TASKS = "## 1. Data Layer\n- [ ] 1.1 token model\n"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ},
    )


def configure(repo: Path, verdict: dict[str, Any]) -> None:
    """Scripted agents (a YAML script, as a user would write one) answering by step."""
    script = {
        "proposal-author": {
            "proposal": [{"write": {"{item_dir}/proposal.md": PROPOSAL}}],
            "tasks": [{"write": {"{item_dir}/tasks.md": TASKS}}],
        },
        "challenger": {"tasks": [{"json": verdict}]},
    }
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
    }
    (repo / ".phasegate").mkdir(exist_ok=True)
    yaml = YAML(typ="safe", pure=True)
    for name, data in (("agents.yaml", script), ("config.yaml", config)):
        with open(repo / ".phasegate" / name, "w") as handle:
            yaml.dump(data, handle)


APPROVED = {"verdict": "APPROVED", "summary": "ok", "issues": []}


@pytest.fixture
def planned(repo: Path) -> Path:
    """A repository whose change add-oauth was planned through the CLI."""
    configure(repo, APPROVED)
    result = phasegate(repo, "plan", "add-oauth", "Add OAuth login")
    assert result.returncode == 0, result.stderr
    assert "Next: phasegate impl add-oauth" in result.stdout
    return repo


def test_help_lists_the_change_commands(repo: Path) -> None:
    """plan/impl/archive (and the change group) are discoverable in --help."""
    top = phasegate(repo, "--help").stdout
    for command in ("plan", "impl", "archive", "mcp", "change"):
        assert f"\n  {command} " in top, command
    group = phasegate(repo, "change", "--help").stdout
    for command in ("plan", "impl", "archive", "status", "list"):
        assert f"\n  {command} " in group, command


def test_workflows_lists_the_change_workflow(repo: Path) -> None:
    """The built-in change.yaml validates and is listed with its phases."""
    result = phasegate(repo, "workflows")
    assert result.returncode == 0, result.stderr
    assert "change (built-in)" in result.stdout
    phases = "proposed → rejected → challenged → implementing → complete; ends: archived"
    assert phases in result.stdout


def test_plan_writes_state_yaml_with_the_phase(planned: Path) -> None:
    """WF-R1: STATE.yaml with the phase field; WF-R2: APPROVED -> challenged."""
    state = YAML(typ="safe", pure=True).load((planned / "changes/add-oauth/STATE.yaml").read_text())
    assert (state["change_id"], state["phase"]) == ("add-oauth", "challenged")


def test_a_command_in_the_wrong_phase_exits_4_saying_what_to_run(planned: Path) -> None:
    """WF-R1: the wrong phase is one clear line naming the phase and the next command."""
    result = phasegate(planned, "archive", "add-oauth")
    assert result.returncode == ExitCode.BLOCKED
    assert result.stderr.strip() == (
        "phasegate: error: change 'add-oauth' is in phase challenged; 'archive' acts only on "
        "complete changes. Next: phasegate impl add-oauth"
    )


def test_change_status_lists_the_changes_and_their_next_command(planned: Path) -> None:
    """phasegate change list / status: where each change stands."""
    listing = phasegate(planned, "change", "list")
    assert "add-oauth" in listing.stdout and "challenged" in listing.stdout
    status = json.loads(phasegate(planned, "change", "status", "add-oauth", "--json").stdout)
    assert (status["phase"], status["next"]) == ("challenged", "phasegate impl add-oauth")


def test_change_list_names_an_unreadable_state_file_and_lists_the_others(planned: Path) -> None:
    """One invalid STATE.yaml does not hide the other changes; it is named, with its error."""
    broken = planned / "changes" / "broken"
    broken.mkdir()
    (broken / "STATE.yaml").write_text("change_id: broken\nphase: nonsense\n")
    listing = phasegate(planned, "change", "list")
    assert listing.returncode == 0, listing.stderr
    assert "add-oauth" in listing.stdout and "challenged" in listing.stdout
    assert "unreadable" in listing.stdout
    assert "changes/broken/STATE.yaml is invalid at phase" in listing.stdout
    rows = json.loads(phasegate(planned, "change", "list", "--json").stdout)
    assert [(r["change_id"], r["phase"]) for r in rows] == [
        ("add-oauth", "challenged"),
        ("broken", "unreadable"),
    ]
    assert "invalid at phase" in rows[1]["error"]
    one = phasegate(planned, "change", "status", "broken")
    assert one.returncode == ExitCode.STATE
    assert "invalid at phase" in one.stderr


def test_plain_status_lists_changes_beside_work_items(planned: Path) -> None:
    """`phasegate status` with no name shows every item of every workflow, changes too."""
    rows = json.loads(phasegate(planned, "status", "--json").stdout)
    (row,) = [r for r in rows if r["workflow"] == "change"]
    assert (row["id"], row["status"]) == ("add-oauth", "challenged")
    assert row["nextCommand"] == "phasegate impl add-oauth"
    table = phasegate(planned, "status").stdout
    assert "add-oauth" in table and "phasegate impl add-oauth" in table


def test_the_generic_commands_refuse_a_change(planned: Path) -> None:
    """The change workflow keeps its own state machine: new/run point to its commands."""
    run = phasegate(planned, "run", "add-oauth")
    assert run.returncode == ExitCode.BAD_INPUT
    assert "phasegate plan, phasegate impl, phasegate archive" in run.stderr
    new = phasegate(planned, "new", "other", "--workflow", "change")
    assert new.returncode == ExitCode.BAD_INPUT
    assert "whose items are created and run with its own commands" in new.stderr


def test_rejected_plan_exits_4(repo: Path) -> None:
    """WF-R2: REJECTED -> rejected, manual intervention needed."""
    configure(repo, {"verdict": "REJECTED", "summary": "wrong approach", "issues": []})
    result = phasegate(repo, "plan", "add-oauth", "Add OAuth login")
    assert result.returncode == ExitCode.BLOCKED
    assert "REJECTED by the challenger: wrong approach" in result.stderr
    assert "--rechallenge" in result.stderr


def test_the_limit_without_a_terminal_exits_3_with_the_question(repo: Path) -> None:
    """Non-interactive use never waits on stdin: exit 3 (waiting on a human), flag named."""
    minor = {
        "verdict": "NEEDS_REVISION",
        "summary": "wording",
        "issues": [{"severity": "low", "description": "typo", "location": None}],
    }
    configure(repo, minor)
    result = phasegate(repo, "plan", "add-oauth", "Add OAuth login", "--mode", "quick")
    assert result.returncode == ExitCode.WAITING
    assert "--on-limit implement or --on-limit continue" in result.stderr
    accepted = phasegate(repo, "plan", "add-oauth", "--on-limit", "implement")
    assert accepted.returncode == 0, accepted.stderr
    assert "challenged (iteration limit reached with minor issues" in accepted.stdout


def _at_the_planning_limit(repo: Path) -> None:
    """``add-oauth`` planned in quick mode against a challenger that keeps finding a typo:
    the plan stops at its iteration limit for a person (exit 3)."""
    minor = {
        "verdict": "NEEDS_REVISION",
        "summary": "wording",
        "issues": [{"severity": "low", "description": "typo", "location": None}],
    }
    configure(repo, minor)
    first = phasegate(repo, "plan", "add-oauth", "Add OAuth login", "--mode", "quick")
    assert first.returncode == ExitCode.WAITING, first.stderr


def test_on_limit_continue_extends_the_budget_once(repo: Path) -> None:
    """One answer, one extension: `plan --on-limit continue` grants one more set of revision
    rounds; at the limit again the plan stops for a person (exit 3) instead of looping."""
    _at_the_planning_limit(repo)
    extended = phasegate(repo, "plan", "add-oauth", "--on-limit", "continue")
    assert extended.returncode == ExitCode.WAITING, extended.stderr
    assert "--on-limit implement or --on-limit continue" in extended.stderr
    journal = (repo / "changes/add-oauth/.journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in journal]
    challenges = [
        e for e in events if e["event"] == "agent.dispatched" and e["role"] == "challenger"
    ]
    assert len(challenges) == 2
    answered = [e for e in events if e["event"] == "decision.answered"]
    assert [(e["choice"], e["by"]) for e in answered] == [("continue", "flag")]


def test_status_of_a_change_that_does_not_exist_is_bad_input(repo: Path) -> None:
    """`change status ID` for an unknown change: one line naming it and how to create it,
    exit 2 (never an internal error), in text and in JSON."""
    for extra in ((), ("--json",)):
        result = phasegate(repo, "change", "status", "nope", *extra)
        assert result.returncode == ExitCode.BAD_INPUT
        assert "no change named 'nope'" in result.stderr
        assert 'phasegate plan nope \\"DESCRIPTION\\"' in result.stderr or (
            'phasegate plan nope "DESCRIPTION"' in result.stderr
        )


def test_answering_a_change_decision_names_the_change_command_to_run_next(repo: Path) -> None:
    """`phasegate answer` on a change points to plan / impl, never to `run` (which refuses it)."""
    configure(repo, {"verdict": "REJECTED", "summary": "wrong approach", "issues": []})
    assert phasegate(repo, "plan", "add-oauth", "Add OAuth login").returncode == 4
    answered = phasegate(repo, "answer", "add-oauth", "rechallenge", "rechallenge")
    assert answered.returncode == 0, answered.stderr
    assert "Next: phasegate plan add-oauth" in answered.stdout
    assert "phasegate run" not in answered.stdout


def test_the_planning_limit_answered_with_answer_points_to_plan(repo: Path) -> None:
    _at_the_planning_limit(repo)
    answered = phasegate(repo, "answer", "add-oauth", "planning-limit", "implement")
    assert answered.returncode == 0, answered.stderr
    assert "Next: phasegate plan add-oauth" in answered.stdout
    resumed = phasegate(repo, "plan", "add-oauth")
    assert resumed.returncode == 0, resumed.stderr
    assert "Next: phasegate impl add-oauth" in resumed.stdout


def with_budget(repo: Path, tokens: int) -> None:
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + f"budget: {{item: {{tokens: {tokens}}}}}\n")


def test_a_budget_stop_in_plan_states_the_question_and_the_answer_command(repo: Path) -> None:
    """A budget cap reached during plan: exit 3, its question, and the command answering it."""
    configure(repo, APPROVED)
    with_budget(repo, 50)
    first = phasegate(repo, "plan", "add-oauth", "Add OAuth login")
    assert first.returncode == ExitCode.WAITING, first.stderr
    line = first.stderr.strip().splitlines()[-1]
    assert "the budget cap of the item (item.tokens)" in line
    assert "Answer with: phasegate answer add-oauth budget raise" in line
    assert "--on-limit" not in line
    answered = phasegate(repo, "answer", "add-oauth", "budget", "raise")
    assert answered.returncode == 0, answered.stderr
    assert "Next: phasegate plan add-oauth" in answered.stdout


def test_the_state_guard_names_the_change_commands(planned: Path) -> None:
    """An agent editing a change's STATE.yaml is pointed to plan / impl / archive, not `run`."""
    from phasegate.integrations.claude_code.guard import pre_tool_use

    target = planned / "changes" / "add-oauth" / "STATE.yaml"
    payload = {
        "hook_event_name": "PreToolUse",
        "cwd": str(planned),
        "tool_name": "Edit",
        "tool_input": {"file_path": str(target), "old_string": "a", "new_string": "b"},
    }
    answer = pre_tool_use(payload)
    assert answer is not None
    text = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "the STATE.yaml of work item 'add-oauth'" in text
    assert "`phasegate impl add-oauth`" in text
    assert "phasegate run" not in text


def test_at_the_planning_limit_change_status_names_the_command_that_answers_it(
    repo: Path,
) -> None:
    """`change list` / `change status` never point to a bare `plan ID` (which only exits 3
    again) while the planning limit waits: they name plan's --on-limit answers, as plan does."""
    _at_the_planning_limit(repo)
    answer = "phasegate plan add-oauth --on-limit implement or --on-limit continue"
    asked = phasegate(repo, "plan", "add-oauth")
    assert asked.returncode == ExitCode.WAITING
    assert f"Answer with: {answer}" in asked.stderr
    status = json.loads(phasegate(repo, "change", "status", "add-oauth", "--json").stdout)
    assert (status["phase"], status["plan_step"], status["next"]) == ("proposed", "decide", answer)
    listing = phasegate(repo, "change", "list", "--json")
    assert [r["next"] for r in json.loads(listing.stdout)] == [answer]
    moved = phasegate(repo, "plan", "add-oauth", "--on-limit", "implement")
    assert moved.returncode == 0, moved.stderr
    status = json.loads(phasegate(repo, "change", "status", "add-oauth", "--json").stdout)
    assert (status["phase"], status["next"]) == ("challenged", "phasegate impl add-oauth")


def test_an_archived_change_is_shown_by_status_decisions_and_logs(repo: Path) -> None:
    """After `archive`, the change's name still works where reading it makes sense: status,
    decisions and logs find it in the archive (never 'create it with phasegate new')."""
    complete(repo, "add-oauth")
    where = changes(repo).archive("add-oauth").archived_to.relative_to(repo).as_posix()
    status = phasegate(repo, "status", "add-oauth", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert (data["workflow"], data["status"], data["nextCommand"]) == ("change", "archived", None)
    assert data["stateFile"].endswith(f"{where}/STATE.yaml")
    text = phasegate(repo, "status", "add-oauth")
    assert text.returncode == 0, text.stderr
    assert "archived" in text.stdout
    decisions = phasegate(repo, "decisions", "add-oauth")
    assert decisions.returncode == 0, decisions.stderr
    logs = phasegate(repo, "logs", "add-oauth")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.strip()


def test_answer_refuses_an_archived_change_saying_where_it_is(repo: Path) -> None:
    """An archived change has nothing to answer: one line saying it is archived and where,
    exit 2 (bad input, as for an unknown name), never a suggestion to create it."""
    complete(repo, "add-oauth")
    where = changes(repo).archive("add-oauth").archived_to.relative_to(repo).as_posix()
    answered = phasegate(repo, "answer", "add-oauth", "planning-limit", "implement")
    assert answered.returncode == ExitCode.BAD_INPUT
    lines = answered.stderr.strip().splitlines()
    assert len(lines) == 1, answered.stderr
    assert f"'add-oauth' is an archived change ({where})" in lines[0]
    assert "phasegate status add-oauth" in lines[0]
    assert "phasegate new" not in lines[0]
