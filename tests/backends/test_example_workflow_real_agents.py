"""The shipped ``review-loop`` example run by the real agent CLIs against the stub LLM server.

Claude Code is the planner and the developer (it writes plan.md, the code and
each task's report with its own Write tool); Codex is the critic and the
reviewer (it answers in the schema phasegate hands it). The critic rejects
plan v1; the gate waits (the run stops as without a terminal), a person
answers with ``phasegate answer``; plan v2 is approved and both tasks are
implemented and reviewed. Only the model replies are scripted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import (
    APPROVE,
    claude_settings,
    codex_settings,
    init_git_repo,
)

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from review_loop_helpers import DECISION, FOLDER, ITEM, PLAN_V1, PLAN_V2, WORKFLOW

from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.state import read_state_file
from phasegate.errors import WaitingForHuman
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer
from phasegate.workflow.example_files import copy_example

pytestmark = pytest.mark.cli_e2e

NOTE = "Limit by key, not by client"
REJECTION = {
    "verdict": "REJECTED",
    "summary": "Wrong unit of limiting",
    "issues": [{"severity": "high", "description": "Clients share keys", "location": "plan.md"}],
}


def planner_and_developer(root: Path) -> Any:
    """Claude's turns: the planner writes (or reads, then rewrites) plan.md; the developer
    writes the task's code, then its report, then says it is done."""
    folder = root / FOLDER

    def handler(request: LoggedRequest) -> Reply | None:
        if "You are the **planner**" in request.prompt:
            plan = folder / "plan.md"
            if not request.tool_result:
                if "Feedback to address" in request.prompt:
                    return Reply.tool("Read", file_path=str(plan))
                return Reply.tool("Write", file_path=str(plan), content=PLAN_V1)
            if "successfully" in request.last:
                return Reply(text="Wrote plan.md")
            return Reply.tool("Write", file_path=str(plan), content=PLAN_V2)
        task = "T1" if "on task `T1`" in request.prompt else "T2"
        code = root / "src" / f"{task.lower()}.py"
        report = folder / "reports" / f"{task}.md"
        if not request.tool_result:
            return Reply.tool("Write", file_path=str(code), content=f"TASK = {task!r}\n")
        if str(code) in request.last:
            return Reply.tool("Write", file_path=str(report), content=f"# {task}\n\nDone.\n")
        return Reply(text=f"Implemented {task}")

    return handler


def critic_and_reviewer(request: LoggedRequest) -> Reply | None:
    """Codex's answers: the critic rejects plan v1 and approves v2; the reviewer approves."""
    if not request.schema:
        return None
    if "You are the **critic**" in request.prompt:
        if "per API key" in request.prompt:
            return Reply.json({"verdict": "APPROVED", "summary": "Ready", "issues": []})
        return Reply.json(REJECTION)
    return Reply.json(APPROVE)


def answer(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "answer", ITEM, DECISION, *args],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env=dict(os.environ),
    )


def test_claude_and_codex_run_the_example_through_its_gate(
    claude_bin: Path, codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    """Plan, a rejection, a person's answer by command, the revision, two reviewed tasks."""
    root = init_git_repo(tmp_path / "repo")
    copy_example(WORKFLOW, root)
    script = Script(anthropic=[planner_and_developer(root)], openai=[critic_and_reviewer])
    with StubLLMServer(script) as stub:
        config = Config.model_validate(
            {
                "retries": {"agent": 0},
                "roles": {
                    "planner": {"backend": "claude"},
                    "developer": {"backend": "claude"},
                    "default": {"backend": "codex"},
                },
                "backends": {
                    "claude": claude_settings(stub, home),
                    "codex": codex_settings(stub, home),
                },
            }
        )
        repo = Repo(root, config)
        repo.new(ITEM, workflow=WORKFLOW, description="Add rate limiting")
        with pytest.raises(WaitingForHuman, match=f"phasegate answer {ITEM} {DECISION}"):
            repo.run(ITEM)
        answered = answer(root, "revise", "--note", NOTE)
        assert answered.returncode == 0, answered.stderr
        outcome = repo.run(ITEM)
        planner_turns = [
            r
            for r in stub.model_requests("anthropic")
            if "You are the **planner**" in r.prompt and not r.tool_result
        ]
    assert outcome.status == "completed"
    assert (root / FOLDER / "plan.md").read_text() == PLAN_V2
    assert NOTE in planner_turns[-1].prompt  # the person's note is the planner's feedback
    for task in ("T1", "T2"):
        assert (root / "src" / f"{task.lower()}.py").read_text() == f"TASK = {task!r}\n"
        assert (root / FOLDER / "reports" / f"{task}.md").read_text() == f"# {task}\n\nDone.\n"
    state = read_state_file(root / FOLDER / ".engine.json").to_dict()
    words = [i["word"] for i in state["nodes"]["plan"]["iterations"]]
    assert words == ["REJECTED", "APPROVED"]
    assert state["decisions"][DECISION]["answer"]["by"] == "command"
    finished = [
        e
        for e in map(json.loads, (root / FOLDER / ".journal.jsonl").read_text().splitlines())
        if e["event"] == "agent.finished"
    ]
    assert [e["role"] for e in finished] == [
        "planner",
        "critic",
        "planner",
        "critic",
        *["developer", "reviewer"] * 2,
    ]
    assert all(e["ok"] and e["session_id"] for e in finished)
    assert repo.status(ITEM)["label"] == "done"
