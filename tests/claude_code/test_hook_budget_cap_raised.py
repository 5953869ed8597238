"""A ``budget`` question left unanswered while the cap was raised in the config: the next
run goes on without an answer, and the SessionStart hook says so as ``phasegate status
NAME`` does (and the ``status`` table agrees), rather than that the item waits on the
budget question."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import init_repo

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


def test_the_hook_says_a_raised_cap_made_the_budget_question_moot(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert run_cli(repo, "init", "--test-command", "true").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain + "\nbudget:\n  item: {usd: 0.8}\n")
    assert run_cli(repo, "new", "it", "-d", "x").returncode == 0
    asked = run_cli(repo, "run", "it")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    context = session_context({"cwd": str(repo)}, environ={})
    assert "- Waiting for a decision: budget:" in context, context

    # Instead of answering, the person raises the cap in the config.
    config.write_text(plain + "\nbudget:\n  item: {usd: 10}\n")
    said = _phase_line(run_cli(repo, "status", "it", env={"COLUMNS": "300"}).stdout, "Phase:")
    assert "the budget cap item.usd no longer holds its next call" in said, said
    context = session_context({"cwd": str(repo)}, environ={})
    assert _phase_line(context, "- Phase:") == f"- {said}", context
    assert "Waiting for a decision" not in context, context
    assert "phasegate answer it budget" not in context, context
    assert "- Next command: phasegate run it" in context, context

    # The table says what `status NAME --json` says: nothing waits, the next run goes on.
    data = json.loads(run_cli(repo, "status", "it", "--json").stdout)
    (row,) = json.loads(run_cli(repo, "status", "--json").stdout)
    assert row["pendingDecisions"] == data["pendingDecisions"] == []
    assert row["nextCommand"] == data["nextCommand"] == "phasegate run it"
    table = run_cli(repo, "status", env={"COLUMNS": "300"}).stdout
    (line,) = [line.split() for line in table.splitlines() if line.split()[:1] == ["it"]]
    assert line[2] == "active" and line[-3:] == ["phasegate", "run", "it"], table
