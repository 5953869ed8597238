"""A budget question answered ``stop``, then the cap raised in the config so that it no
longer holds the call: the next run goes on without asking, and ``status NAME``, ``status
--json`` and the SessionStart hook say so (no "asks again", no ``--answer budget=raise``),
as they do for a waiting question a raised cap made moot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_process import run_cli
from phasegate.integrations.claude_code.hook import session_context

#: Executor calls cost $0.30, reviews $0.10; reviewers never approve.
REJECTING = """\
executor:
  "*": [{write: {"{item_dir}/brainstorm.md": "# B\\n"}, cost_usd: 0.3}]
"*":
  "*":
    - verdict: {approved: false, summary: no, issues: [{severity: blocker, description: more}]}
      cost_usd: 0.1
"""


def _phase_line(text: str, start: str) -> str:
    (line,) = [line.strip() for line in text.splitlines() if line.strip().startswith(start)]
    return line


def _events(repo: Path) -> list[dict[str, object]]:
    journal = repo / "docs" / "features" / "it" / ".journal.jsonl"
    return [json.loads(line) for line in journal.read_text().splitlines()]


@pytest.mark.parametrize("stopped_by_a_run", [True, False], ids=["run-stopped", "answered"])
def test_a_stop_a_raised_cap_made_moot_is_not_reported(
    git_repo: Path, stopped_by_a_run: bool
) -> None:
    repo = git_repo
    assert run_cli(repo, "init", "--test-command", "true").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain + "\nbudget:\n  item: {usd: 0.8}\n")
    assert run_cli(repo, "new", "it", "-d", "x").returncode == 0
    asked = run_cli(repo, "run", "it")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert run_cli(repo, "answer", "it", "budget", "stop").returncode == 0
    if stopped_by_a_run:
        stopped = run_cli(repo, "run", "it")
        assert stopped.returncode == 4, stopped.stdout + stopped.stderr
    held = run_cli(repo, "status", "it", env={"COLUMNS": "300"}).stdout
    assert "stopped by the budget cap item.usd" in held, held
    # Before a run acts on the stop, that run stops as answered: plain `run` is next.
    raise_next = " --answer budget=raise" if stopped_by_a_run else ""
    assert _phase_line(held, "Next:") == f"Next: phasegate run it{raise_next}", held

    # The person raises the cap in the config: the held call is no longer held.
    config.write_text(plain + "\nbudget:\n  item: {usd: 10}\n")
    shown = run_cli(repo, "status", "it", env={"COLUMNS": "300"}).stdout
    said = _phase_line(shown, "Phase:")
    assert "the budget cap item.usd no longer holds its next call" in said, said
    assert "the next run goes on without asking" in said, said
    assert "asks again" not in shown, shown
    assert "budget=raise" not in shown, shown
    assert _phase_line(shown, "Next:") == "Next: phasegate run it", shown

    data = json.loads(run_cli(repo, "status", "it", "--json").stdout)
    progress = data["inProgress"]
    assert "budget" not in progress, progress
    assert progress["capRaised"] == "item.usd", progress
    assert progress["capRaisedAfterStop"] is True, progress
    assert not progress.get("interrupted"), progress
    assert data["nextCommand"] == "phasegate run it", data["nextCommand"]
    (row,) = json.loads(run_cli(repo, "status", "--json").stdout)
    assert row["nextCommand"] == "phasegate run it", row["nextCommand"]
    assert "budget" not in row["inProgress"], row["inProgress"]

    # The SessionStart hook says what `status NAME` says.
    context = session_context({"cwd": str(repo)}, environ={})
    assert _phase_line(context, "- Phase:") == f"- {said}", context
    assert "budget=raise" not in context, context
    assert "- Next command: phasegate run it" in context, context

    # What the next run does: the held executor call goes ahead, nothing asked.
    before = len(_events(repo))
    went = run_cli(repo, "run", "it", "--until", "brainstorm")
    assert went.returncode == 0, went.stdout + went.stderr
    after = _events(repo)[before:]
    assert not [e for e in after if e["event"] == "decision.needed"], after
    assert any(
        e["event"] == "agent.dispatched" and e["role"] == "executor" and e["iteration"] == 3
        for e in after
    ), after


def test_a_cap_raised_too_little_after_a_stop_still_holds_the_call(git_repo: Path) -> None:
    repo = git_repo
    assert run_cli(repo, "init", "--test-command", "true").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain + "\nbudget:\n  item: {usd: 0.8}\n")
    assert run_cli(repo, "new", "it", "-d", "x").returncode == 0
    assert run_cli(repo, "run", "it").returncode == 3
    assert run_cli(repo, "answer", "it", "budget", "stop").returncode == 0
    assert run_cli(repo, "run", "it").returncode == 4

    # $0.80 spent, the next call estimated at $0.30: a $1.00 cap still holds it.
    config.write_text(plain + "\nbudget:\n  item: {usd: 1.0}\n")
    shown = run_cli(repo, "status", "it", env={"COLUMNS": "300"}).stdout
    assert "stopped by the budget cap item.usd" in _phase_line(shown, "Phase:"), shown
    assert _phase_line(shown, "Next:") == "Next: phasegate run it --answer budget=raise", shown
    context = session_context({"cwd": str(repo)}, environ={})
    assert "stopped by the budget cap item.usd" in _phase_line(context, "- Phase:"), context
    asked = run_cli(repo, "run", "it")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert "phasegate answer it budget raise" in asked.stderr, asked.stderr


def test_the_table_after_a_stop_and_a_raised_cap(git_repo: Path) -> None:
    repo = git_repo
    assert run_cli(repo, "init", "--test-command", "true").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain + "\nbudget:\n  item: {usd: 0.8}\n")
    assert run_cli(repo, "new", "it", "-d", "x").returncode == 0
    assert run_cli(repo, "run", "it").returncode == 3
    assert run_cli(repo, "answer", "it", "budget", "stop").returncode == 0
    assert run_cli(repo, "run", "it").returncode == 4
    config.write_text(plain + "\nbudget:\n  item: {usd: 10}\n")
    table = run_cli(repo, "status", env={"COLUMNS": "300"}).stdout
    (line,) = [line.split() for line in table.splitlines() if line.split()[:1] == ["it"]]
    assert line[2] == "active" and line[-3:] == ["phasegate", "run", "it"], table
