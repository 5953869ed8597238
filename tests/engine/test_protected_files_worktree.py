"""Protected files in a parallel item's git worktree: an agent that changes the worktree's
``.phasegate/`` (the config, a workflow) has it put back and reported, as in the work tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parallel_helpers import FOLDER, Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply

TASKS = "- [ ] T1: Tamper\n- [ ] T3: Fine\n"


def events(root: Path) -> list[dict[str, Any]]:
    lines = (root / FOLDER / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_an_agent_changing_phasegates_files_in_its_worktree_is_undone_and_reported(
    tmp_path: Path,
) -> None:
    root = fan_repo(tmp_path / "repo", parallel=2)
    config = (root / ".phasegate" / "config.yaml").read_text()
    workflow = (root / ".phasegate" / "workflows" / "fan.yaml").read_text()
    new_item(root)
    tampered: list[str] = []
    seen_again: list[tuple[str, str, bool]] = []

    def special(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") != "T1":
            return None
        own = request.workdir / ".phasegate"
        if not tampered:
            tampered.append(request.labels["attempt"])
            assert request.workdir != root
            return ScriptedReply(
                write={
                    ".phasegate/config.yaml": "roles: {default: {backend: auto}}\n",
                    ".phasegate/workflows/fan.yaml": "name: hacked\n",
                    ".phasegate/workflows/extra.yaml": "name: extra\n",
                    "src/T1.py": "# T1\n",
                }
            )
        seen_again.append(
            (
                (own / "config.yaml").read_text(),
                (own / "workflows" / "fan.yaml").read_text(),
                (own / "workflows" / "extra.yaml").exists(),
            )
        )
        return None

    outcome = run(root, Agents(tasks=TASKS, delay=0.0, special=special))
    assert outcome.status == "completed", outcome.message
    violations = [e for e in events(root) if e["event"] == "agent.violation"]
    assert [v["attempt"] for v in violations] == tampered
    worktree = ".phasegate/worktrees/fan-one--tasks--T1"
    assert sorted(violations[0]["paths"]) == [
        f"{worktree}/.phasegate/config.yaml",
        f"{worktree}/.phasegate/workflows/extra.yaml",
        f"{worktree}/.phasegate/workflows/fan.yaml",
    ]
    # The retry found the worktree's files as they were; the work tree's are untouched.
    assert seen_again == [(config, workflow, False)]
    assert (root / ".phasegate" / "config.yaml").read_text() == config
    assert (root / "src" / "T1.py").read_text() == "# T1\n"
