"""A ``budget`` question left unanswered while the cap was raised in the config: the next
run goes on without an answer (it withdraws the question), so ``status`` and
``decisions`` no longer ask for one; they say the next run goes on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_process import run_cli

#: Executor calls cost $0.30, reviews $0.10; reviewers never approve.
REJECTING = """\
executor:
  "*": [{write: {"{item_dir}/brainstorm.md": "# B\\n"}, cost_usd: 0.3}]
"*":
  "*":
    - verdict: {approved: false, summary: no, issues: [{severity: blocker, description: more}]}
      cost_usd: 0.1
"""


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-q", "-m", "i"], cwd=repo, check=True)
    return repo


def test_a_budget_question_a_raised_cap_made_moot_is_not_asked_for(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert run_cli(repo, "init", "--test-command", "true").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain + "\nbudget:\n  item: {usd: 0.8}\n")
    assert run_cli(repo, "new", "it", "-d", "x").returncode == 0
    asked = run_cli(repo, "run", "it")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    data = json.loads(run_cli(repo, "status", "it", "--json").stdout)
    assert [d["id"] for d in data["pendingDecisions"]] == ["budget"]

    # Instead of answering, the person raises the cap in the config.
    config.write_text(plain + "\nbudget:\n  item: {usd: 10}\n")
    shown = run_cli(repo, "status", "it").stdout
    data = json.loads(run_cli(repo, "status", "it", "--json").stdout)
    assert data["pendingDecisions"] == [], data["pendingDecisions"]
    assert "budget" not in data["inProgress"], data["inProgress"]
    assert data["inProgress"]["capRaised"] == "item.usd", data["inProgress"]
    assert not data["inProgress"].get("interrupted"), data["inProgress"]
    assert data["nextCommand"] == "phasegate run it", data["nextCommand"]
    assert "phasegate answer it budget" not in shown, shown
    assert "waiting on a decision" not in shown, shown
    assert "the budget cap item.usd no longer holds its next call" in shown, shown
    assert "the next run goes on without an answer" in shown, shown
    listed = run_cli(repo, "decisions", "it")
    assert listed.stdout.strip() == "it: no decision waits.", listed.stdout
    assert json.loads(run_cli(repo, "decisions", "--json").stdout) == []

    # What the next run does: it goes on (the question withdrawn), asking nothing.
    went = run_cli(repo, "run", "it")
    assert "budget" not in went.stderr, went.stderr
    events = [
        json.loads(line)
        for line in (repo / "docs" / "features" / "it" / ".journal.jsonl").read_text().splitlines()
    ]
    assert any(e["event"] == "decision.withdrawn" and e["id"] == "budget" for e in events)
