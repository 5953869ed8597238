"""A plan step whose author wrote nothing every attempt stops (exit 6) saying to run the
command again; running it again calls the author again, not the recorded result."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from change_helpers import ChangeAgents, changes
from ruamel.yaml import YAML

from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.change import PlanOptions
from phasegate.errors import AgentError

PROPOSAL = "---\nchange_id: add-oauth\nspecs: []\n---\n# Proposal\nOAuth.\n"
TASKS = "## 1. Data Layer\n- [ ] 1.1 token model\n"


def test_plan_run_again_after_a_missing_proposal_calls_the_author_again(repo: Path) -> None:
    lazy = ScriptedBackend(handler=lambda request: ScriptedReply(text="done!"))
    with pytest.raises(AgentError, match="run the same command again to retry"):
        changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": lazy})
    assert len(lazy.requests) == 2
    agents = ChangeAgents(repo)
    changes(repo).plan("add-oauth", backends={"default": agents.backend()}, options=PlanOptions())
    assert ("proposal-author", "proposal") in agents.steps
    assert changes(repo).state("add-oauth").phase.value == "challenged"


def _script(repo: Path, author: dict[str, Any]) -> None:
    """The scripted agents as a user writes them in .phasegate/agents.yaml."""
    script = {
        "proposal-author": author,
        "challenger": {"tasks": [{"json": {"verdict": "APPROVED", "summary": "ok", "issues": []}}]},
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


def _plan(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "plan", "add-oauth", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_plan_after_an_author_that_wrote_the_wrong_file_retries(repo: Path) -> None:
    # The author writes proposal.md at the top of the repository, not in the change.
    _script(repo, {"proposal": [{"write": {"proposal.md": PROPOSAL}, "text": "wrote it"}]})
    failed = _plan(repo, "Add OAuth login")
    assert failed.returncode == 6, failed.stdout + failed.stderr
    said = failed.stdout + failed.stderr
    assert "without writing changes/add-oauth/proposal.md" in said
    # Two attempts: the first is tried again, the last is not said to be.
    assert said.count("did not write changes/add-oauth/proposal.md; trying again") == 1, said
    assert said.count("did not write changes/add-oauth/proposal.md") == 2, said
    _script(
        repo,
        {
            "proposal": [{"write": {"{item_dir}/proposal.md": PROPOSAL}}],
            "tasks": [{"write": {"{item_dir}/tasks.md": TASKS}}],
        },
    )
    again = _plan(repo)
    assert again.returncode == 0, again.stdout + again.stderr
    assert changes(repo).state("add-oauth").phase.value == "challenged"
