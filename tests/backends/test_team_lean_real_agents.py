"""The ``team`` workflow in lean mode with the real agent CLIs on the stub LLM server.

Claude Code is SpecAgent and Coder (it writes the session's files and the code with its
own Write tool); Codex is Reviewer, QA and Security (its verdicts come back in the schema
phasegate hands it). The session goes INTAKE_LEAN -> IMPLEMENT_LOOP -> INTEGRATE -> DONE
with phasegate running the acceptance checks and writing report.md itself.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import claude_settings, codex_settings, init_git_repo

sys.path.insert(0, str(Path(__file__).parent.parent / "team"))
from team_helpers import LIMIT_CHECK, LIMIT_OK, status_json, task_entries, tasks_yaml

from phasegate.api import Repo
from phasegate.config import Config
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer

ITEM = "limit"
SPEC = (
    "# Spec\n\n## Goal\n\nRefuse the 6th login attempt within a minute.\n\n"
    "## Acceptance criteria\n\n- AC-1: the limiter refuses the 6th attempt\n"
)
ACCEPTANCE = {"criteria": [{"id": "AC-1", "description": "6th refused", "check": LIMIT_CHECK}]}


def writer(steps: dict[str, list[tuple[str, Path, str]]]) -> Callable[[LoggedRequest], Reply]:
    """Claude's turns: per agent (found in its prompt) the tool calls to make, one a turn."""
    done: dict[str, int] = {}

    def handler(request: LoggedRequest) -> Reply:
        agent = next(name for name in steps if name in request.prompt)
        index = done.get(agent, 0) if request.tool_result else 0
        if index >= len(steps[agent]):
            return Reply(text=f"{agent} finished")
        done[agent] = index + 1
        tool, path, content = steps[agent][index]
        if tool == "Read":
            return Reply.tool("Read", file_path=str(path))
        return Reply.tool("Write", file_path=str(path), content=content)

    return handler


def verdicts(request: LoggedRequest) -> Reply | None:
    """Codex reviews: OK, in the verdict schema it was handed."""
    if not request.schema:
        return None
    return Reply.json({"verdict": "OK", "summary": "looks right", "issues": []})


@pytest.mark.cli_e2e
def test_team_lean_mode_with_claude_writing_and_codex_reviewing(
    claude_bin: Path, codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    """Seed 003 lean mode, real CLIs: Claude writes the short spec, acceptance.json and a
    single-task tasks.yaml, then the code (marking the task implemented); Codex reviews;
    phasegate runs the checks, writes report.md and reaches DONE."""
    root = tmp_path / "repo"
    session = root / ".agents-work" / ITEM
    task = task_entries()[:1]
    steps: dict[str, list[tuple[str, Path, str]]] = {
        "INTAKE_LEAN": [
            ("Write", session / "spec.md", SPEC),
            ("Write", session / "acceptance.json", json.dumps(ACCEPTANCE)),
            ("Write", session / "tasks.yaml", tasks_yaml(task)),
        ],
        "You are the **Coder**": [
            ("Write", root / "src" / "limit.py", LIMIT_OK),
            ("Read", session / "tasks.yaml", ""),
            ("Write", session / "tasks.yaml", tasks_yaml(task, T1="implemented")),
        ],
    }
    script = Script(anthropic=[writer(steps)], openai=[verdicts])
    with StubLLMServer(script) as stub:
        init_git_repo(root)
        config: dict[str, Any] = {
            "retries": {"agent": 0},
            "roles": {
                "spec-agent": {"backend": "claude"},
                "coder": {"backend": "claude"},
                "default": {"backend": "codex"},
            },
            "backends": {
                "claude": claude_settings(stub, home),
                "codex": codex_settings(stub, home),
            },
        }
        repo = Repo(root, Config.model_validate(config))
        repo.new(ITEM, workflow="team", mode="lean", description="Limit login attempts")
        outcome = repo.run(ITEM)
        reviews = [r for r in stub.model_requests("openai") if r.schema]
    assert outcome.status == "completed"
    status = status_json(root, ITEM)
    assert status["current_state"] == "DONE"
    assert status["tasks"] == [{"id": "T1", "title": "Rate limiter", "status": "completed"}]
    assert status["last_ci_result"] == "green"
    assert {"spec-agent", "coder", "reviewer"} <= set(status["agents_run"])
    assert (root / "src" / "limit.py").read_text() == LIMIT_OK
    report = (session / "report.md").read_text()
    assert "## How to test" in report and "AC-1" in report
    assert len(reviews) >= 1
    journal = [json.loads(x) for x in (session / ".journal.jsonl").read_text().splitlines()]
    backends = {e["role"]: e["backend"] for e in journal if e["event"] == "agent.dispatched"}
    assert backends["spec-agent"].startswith("claude") and backends["coder"].startswith("claude")
    assert backends["reviewer"].startswith("codex")
