"""Specs that depend on each other in a cycle: plan writes them all, the cycle broken at
the listed order, and the journal says which dependency was ignored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from cli_process import run_cli

PROPOSAL = """\
---
change_id: add-y
specs:
  - name: session
    depends_on: [auth]
  - name: auth
    depends_on: [session]
---
# Proposal
Sessions and auth.
"""
SPEC = "# {name}\n\n## Requirements\n\n### R1: {name}\nText.\n"
TASKS = "## 1. Data Layer\n- [ ] 1.1 do it\n"


def configure(repo: Path) -> None:
    script: dict[str, Any] = {
        "proposal-author": {
            "proposal": [{"write": {"{item_dir}/proposal.md": PROPOSAL}}],
            "spec": [
                {
                    "write": {
                        "{item_dir}/specs/session.md": SPEC.format(name="session"),
                        "{item_dir}/specs/auth.md": SPEC.format(name="auth"),
                    }
                }
            ],
            "tasks": [{"write": {"{item_dir}/tasks.md": TASKS}}],
        },
        "challenger": {"tasks": [{"json": {"verdict": "APPROVED", "summary": "ok"}}]},
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


def test_a_dependency_cycle_is_broken_at_the_listed_order_and_journaled(repo: Path) -> None:
    configure(repo)
    planned = run_cli(repo, "plan", "add-y", "Y", "--mode", "quick")
    assert planned.returncode == 0, planned.stderr
    assert "challenged" in planned.stdout
    lines = (repo / "changes/add-y/.journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    (read,) = [e for e in events if e["event"] == "foreach.items" and e["node"] == "specs"]
    assert sorted(read["items"]) == ["auth.md", "session.md"]
    notes = " ".join(read["notes"])
    assert "cycle" in notes and "session.md -> auth.md -> session.md" in notes
    written = [
        e.get("task")
        for e in events
        if e["event"] == "agent.dispatched" and e.get("path", "").startswith("specs[")
    ]
    assert len(written) == 2
    # Run again: nothing is refused.
    again = run_cli(repo, "plan", "add-y")
    assert again.returncode == 0, again.stderr
