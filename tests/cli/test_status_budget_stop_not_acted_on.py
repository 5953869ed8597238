"""A budget question answered ``stop`` that no run has acted on yet: ``status NAME``, the
``status`` table, ``status --json`` and the SessionStart hook say the next run stops (exit 4)
and name a command that does so (``phasegate run NAME``, not ``--answer budget=raise``, which
that run would not follow); once a run stopped on it, they say the next run asks again.
Throughout, the hook counts the review iterations ``status`` counts: not the one the cap
holds back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_process import run_cli
from phasegate.integrations.claude_code.hook import session_context

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

#: Executor calls cost $0.30, reviews $0.10; reviewers never approve.
REJECTING = """\
executor:
  "*": [{write: {"{item_dir}/brainstorm.md": "# B\\n"}, cost_usd: 0.3}]
"*":
  "*":
    - verdict: {approved: false, summary: no, issues: [{severity: blocker, description: more}]}
      cost_usd: 0.1
"""

WIDE = {"COLUMNS": "300"}


def _line(text: str, start: str) -> str:
    (line,) = [line.strip() for line in text.splitlines() if line.strip().startswith(start)]
    return line


def _stopped_at_the_cap(tmp_path: Path) -> Path:
    """An item whose brainstorm executor call a $0.80 cap holds (2 of 3 iterations ran),
    the budget question answered ``stop`` by ``phasegate answer``."""
    repo = init_repo(tmp_path / "repo")
    assert run_cli(repo, "init", "--test-command", "true").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\nbudget:\n  item: {usd: 0.8}\n")
    assert run_cli(repo, "new", "it", "-d", "x").returncode == 0
    asked = run_cli(repo, "run", "it")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert run_cli(repo, "answer", "it", "budget", "stop").returncode == 0
    return repo


def test_status_says_the_next_run_stops_on_an_answered_stop(tmp_path: Path) -> None:
    repo = _stopped_at_the_cap(tmp_path)

    shown = run_cli(repo, "status", "it", env=WIDE).stdout
    said = _line(shown, "Phase:")
    assert said.startswith("Phase: brainstorm, stopped by the budget cap item.usd"), shown
    assert "(answered stop; 2 of 3 iterations ran)" in said, said
    assert "the next run stops as answered (exit 4)" in said, said
    assert "the next run asks again" not in said, said
    assert _line(shown, "Next:") == "Next: phasegate run it", shown
    assert "budget=raise" not in shown, shown

    data = json.loads(run_cli(repo, "status", "it", "--json").stdout)
    assert data["nextCommand"] == "phasegate run it", data["nextCommand"]
    held = data["inProgress"]["budget"]
    assert held["answer"] == "stop" and held["nextRunStops"] is True, held
    (row,) = json.loads(run_cli(repo, "status", "--json").stdout)
    assert row["nextCommand"] == "phasegate run it", row
    table = run_cli(repo, "status", env=WIDE).stdout
    (cells,) = [line.split() for line in table.splitlines() if line.split()[:1] == ["it"]]
    assert cells[-3:] == ["phasegate", "run", "it"], table

    context = session_context({"cwd": str(repo)}, environ={})
    assert _line(context, "- Phase:") == f"- {said}", context
    assert "- Next command: phasegate run it" in context.splitlines(), context
    assert "budget=raise" not in context, context

    # What status said: that command stops at once on the recorded answer, exit 4.
    stopped = run_cli(repo, "run", "it")
    assert stopped.returncode == 4, stopped.stdout + stopped.stderr

    # Now a run acted on it: the next one asks again, and the flag raises it there.
    shown = run_cli(repo, "status", "it", env=WIDE).stdout
    said = _line(shown, "Phase:")
    assert said.endswith("(answered stop; 2 of 3 iterations ran); the next run asks again"), said
    assert _line(shown, "Next:") == "Next: phasegate run it --answer budget=raise", shown
    data = json.loads(run_cli(repo, "status", "it", "--json").stdout)
    assert "nextRunStops" not in data["inProgress"]["budget"], data["inProgress"]
    context = session_context({"cwd": str(repo)}, environ={})
    assert _line(context, "- Phase:") == f"- {said}", context
    assert "- Next command: phasegate run it --answer budget=raise" in context.splitlines()


def test_the_hook_counts_the_iterations_status_counts_at_a_budget_stop(tmp_path: Path) -> None:
    repo = _stopped_at_the_cap(tmp_path)
    for acted in (False, True):  # answered, then a run stopped on the answer
        if acted:
            assert run_cli(repo, "run", "it").returncode == 4
        data = json.loads(run_cli(repo, "status", "it", "--json").stdout)
        (phase,) = [p for p in data["phases"] if p["node"] == "brainstorm"]
        assert phase["iterations"] == 2, phase
        context = session_context({"cwd": str(repo)}, environ={})
        ran = _line(context, "- Review iterations so far:")
        assert ran == "- Review iterations so far: 2", context
