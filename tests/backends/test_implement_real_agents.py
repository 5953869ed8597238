"""One implement task end to end with the real CLIs on the stub LLM server: claude plays the
task's agent (the-developer), codex plays the reviewer the selector picks (seed 004)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import claude_settings, codex_settings, init_git_repo

sys.path.insert(0, str(Path(__file__).parent.parent / "implement"))
from implement_helpers import FIXTURES, PLAN, SPEC, key

from phasegate.api import Repo
from phasegate.config import Config
from phasegate.implement.plan import parse_plan
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer

PLAN_TEXT = (
    "# Implementation Plan\n\n## Phase 1: Authentication\n\n"
    "- [ ] **Implement JWT authentication** [`agent: the-developer`] [`review: true`] "
    "[`review_focus: security`]\n"
    "  - Create the auth middleware in src/auth.py\n"
    "  - Validate the token's signature\n"
)
V1 = "def authenticate(token):\n    return verify_jwt(token)\n"
V2 = V1 + "\nRATE_LIMIT_PER_MINUTE = 5\n"


def developer(target: Path) -> Any:
    """Claude writes src/auth.py; asked to revise, it reads it first, then writes v2."""

    def handler(request: LoggedRequest) -> Reply | None:
        revising = "Feedback to address" in request.prompt
        if not request.tool_result:
            if revising:
                return Reply.tool("Read", file_path=str(target))
            return Reply.tool("Write", file_path=str(target), content=V1)
        if "successfully" in request.last:
            return Reply(text="Wrote src/auth.py")
        return Reply.tool("Write", file_path=str(target), content=V2)

    return handler


def security_review(request: LoggedRequest) -> Reply | None:
    """Approve only once the diff under review has rate limiting."""
    if not request.schema:
        return None
    if "RATE_LIMIT_PER_MINUTE" in request.prompt:
        return Reply.json({"verdict": "APPROVED", "summary": "Looks right", "issues": []})
    issue = {"severity": "high", "description": "Add rate limiting", "location": "src/auth.py"}
    return Reply.json({"verdict": "NEEDS_REVISION", "summary": "Not yet", "issues": [issue]})


@pytest.mark.cli_e2e
def test_claude_implements_and_codex_reviews_a_plan_task(
    claude_bin: Path, codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    """The task is delegated to claude as the-developer, reviewed by codex as the selected
    the-security-engineer (revision, then approval), ticked in PLAN.md, and recorded in
    .the-startup/review-cycles.json."""
    root = tmp_path / "repo"
    init_git_repo(root)
    (root / SPEC).mkdir(parents=True)
    (root / PLAN).write_text(PLAN_TEXT)
    agents = root / ".claude" / "agents"
    agents.mkdir(parents=True)
    for name in ("the-developer", "the-security-engineer", "the-architect"):
        shutil.copy(FIXTURES / "agents" / f"{name}.md", agents / f"{name}.md")
    script = Script(anthropic=[developer(root / "src" / "auth.py")], openai=[security_review])
    with StubLLMServer(script) as stub:
        config = Config.model_validate(
            {
                "retries": {"agent": 0},
                "roles": {"implementer": {"backend": "claude"}, "default": {"backend": "codex"}},
                "backends": {
                    "claude": claude_settings(stub, home),
                    "codex": codex_settings(stub, home),
                },
            }
        )
        repo = Repo(root, config)
        repo.new("006", workflow="implement", data={"plan": PLAN})
        outcome = repo.run("006")
    assert outcome.status == "completed"
    assert (root / "src" / "auth.py").read_text() == V2
    plan = parse_plan((root / PLAN).read_text(), root / PLAN)
    assert plan.tasks()[0].done
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]", 1)
    cycles = json.loads((root / ".the-startup" / "review-cycles.json").read_text())
    task = cycles["sessions"]["006"]["tasks"][key("Implement JWT authentication")]
    assert task["implementer"] == "the-developer"
    assert [(r["agent"], r["status"]) for r in task["reviewers"]] == [
        ("the-security-engineer", "NEEDS_REVISION"),
        ("the-security-engineer", "APPROVED"),
    ]
    assert task["reviewers"][0]["feedback"] == "Add rate limiting"
    events = [
        json.loads(line)
        for line in (root / ".phasegate/implement/006/.journal.jsonl").read_text().splitlines()
    ]
    backends = {(e["role"], e["backend"]) for e in events if e["event"] == "agent.dispatched"}
    assert backends == {("the-developer", "claude"), ("the-security-engineer", "codex")}
