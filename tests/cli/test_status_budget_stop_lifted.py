"""A budget stop that was later lifted is not what ``status`` reports: after a person
answered the cap's question ``stop`` and then raised the cap in the config, the next run's
held call goes ahead; if that run dies later in the same visit of the node, ``status``
says where it stands, not that the budget cap stopped it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

#: Executor calls cost $0.30, reviews $0.10; reviewers never approve.
REJECTING = """\
executor:
  "*": [{write: {"{item_dir}/brainstorm.md": "# B\\n"}, cost_usd: 0.3}]
"*":
  "*":
    - verdict: {approved: false, summary: no, issues: [{severity: blocker, description: more}]}
      cost_usd: 0.1
"""


def _git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-q", "-m", "i"], cwd=repo, check=True)
    return repo


def _status(capsys: pytest.CaptureFixture[str], repo: Path) -> tuple[str, Any]:
    code, shown, err = cli(capsys, "status", "it", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "status", "it", "--json", "-C", str(repo))
    assert code == 0, err
    return shown, json.loads(out)


def test_a_run_after_the_cap_was_raised_in_config_is_not_reported_as_the_budget_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _git_repo(tmp_path)
    assert cli(capsys, "init", "--test-command", "true", "-C", str(repo))[0] == 0
    script = repo / ".phasegate" / "agents.yaml"
    script.write_text(REJECTING)
    config = repo / ".phasegate" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain + "\nbudget:\n  item: {usd: 0.8}\n")
    assert cli(capsys, "new", "it", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    assert cli(capsys, "answer", "it", "budget", "stop", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "it", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    shown, data = _status(capsys, repo)
    assert "stopped by the budget cap item.usd" in shown, shown

    # The cap is raised in the config; the next run's held call goes ahead, and the run
    # dies on that call (the agent fails every attempt), in the same visit of brainstorm.
    config.write_text(plain + "\nbudget:\n  item: {usd: 10}\n")
    script.write_text('executor:\n  "*": [{fail: {exit: 1, error: the model is overloaded}}]\n')
    code, out, err = cli(capsys, "run", "it", "-C", str(repo))
    assert code != 0 and "the model is overloaded" in err, out + err

    shown, data = _status(capsys, repo)
    assert "budget" not in data["inProgress"], data["inProgress"]
    assert "stopped by the budget cap" not in shown, shown
    assert "budget=raise" not in str(data["nextCommand"]), data["nextCommand"]
    assert data["nextCommand"] == "phasegate run it"
    assert data["lastFailure"]["node"] == "brainstorm"
    assert "Last run failed: executor failed in brainstorm" in shown, shown
