"""What the work tree held before ``impl`` began is not the implementation: an
implementer that changes nothing is not reviewed although an untracked file lies around,
and that file is not put in front of the reviewer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from change_helpers import ChangeAgents, changes, git, plan_approved
from ruamel.yaml import YAML

from cli_process import run_cli
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.errors import ExitCode

PROPOSAL = "---\nchange_id: add-z\nspecs: []\n---\n# Proposal\nZ.\n"
TASKS = "## 1. Data Layer\n- [ ] 1.1 do it\n"


def configure(repo: Path) -> None:
    script: dict[str, Any] = {
        "proposal-author": {
            "proposal": [{"write": {"{item_dir}/proposal.md": PROPOSAL}}],
            "tasks": [{"write": {"{item_dir}/tasks.md": TASKS}}],
        },
        "challenger": {"tasks": [{"json": {"verdict": "APPROVED", "summary": "ok"}}]},
        "implementer": {"*": [{"text": "did nothing"}]},
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


def test_an_untracked_file_from_before_impl_is_no_implementation(repo: Path) -> None:
    configure(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "agents")
    planned = run_cli(repo, "plan", "add-z", "Z", "--mode", "quick")
    assert planned.returncode == 0, planned.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    (repo / "notes.txt").write_text("my notes\n")
    implemented = run_cli(repo, "impl", "add-z")
    assert implemented.returncode == ExitCode.BLOCKED, implemented.stderr
    assert "the implementer changed no files in 1 round(s), so no reviewer was asked" in (
        implemented.stderr
    )
    lines = (repo / "changes/add-z/.journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert not [e for e in events if e.get("role") == "reviewer"]
    # Changes made by hand after the stop are reviewed.
    (repo / "notes.txt").write_text("my notes, edited\n")
    again = run_cli(repo, "impl", "add-z", "--review-only")
    lines = (repo / "changes/add-z/.journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert [e for e in events if e["event"] == "agent.dispatched" and e["role"] == "reviewer"]
    assert again.returncode == ExitCode.AGENT  # a YAML-scripted reviewer records no review


def test_the_reviewer_sees_only_what_changed_since_impl_began(repo: Path) -> None:
    agents = plan_approved(repo, "add-oauth")
    (repo / "notes.txt").write_text("my private notes\n")
    prompts: list[str] = []

    class Recording(ChangeAgents):
        def __call__(self, request: AgentRequest) -> ScriptedReply | None:
            if request.role == "reviewer":
                prompts.append(request.prompt_text())
            return super().__call__(request)

    recording = Recording(repo, reviews=agents.reviews)
    outcome = changes(repo).impl("add-oauth", backends={"default": recording.backend()})
    assert outcome.status == "complete", outcome.message
    (prompt,) = prompts
    assert "app/implement_data.py" in prompt
    assert "my private notes" not in prompt
    assert "notes.txt" not in prompt
