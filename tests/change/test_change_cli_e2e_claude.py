"""End to end: ``phasegate impl`` with the real Claude Code CLI as reviewer, against the stub.

The reviewer is the pinned ``claude`` binary run by phasegate's claude
backend; it is given phasegate's MCP server through ``--mcp-config``, and the
stub LLM server makes the model call ``create_review``. The tool writes
REVIEW.md, and the phase follows the verdict it recorded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from change_helpers import (
    FINDING,
    assert_fixed_once_then_complete,
    changes,
    configure_real_reviewer,
    plan_approved,
    review,
)

from phasegate.change import read_review
from phasegate.errors import ExitCode
from phasegate.testing import LoggedRequest, Match, Reply, Rule, Script, StubLLMServer
from phasegate.testing.clis import find_cli

pytestmark = pytest.mark.cli_e2e

TOOL = "mcp__phasegate__create_review"
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def claude_bin() -> Path:
    path = find_cli("claude", REPO_ROOT)
    if path is None:
        pytest.skip("node_modules/.bin/claude is not installed (run `npm ci` at the repo root)")
    return path


def configure(repo: Path, claude: Path, stub: StubLLMServer) -> None:
    """Scripted implementer; the reviewer is the claude backend pointed at the stub."""
    home = repo.parent / "home"
    home.mkdir(exist_ok=True)
    reviewer = {
        "backend": "claude",
        "binary": str(claude),
        "model": "claude-sonnet-4-5",
        "base_url": stub.url,
        "config_dir": str(home / "claude-config"),
        "env": {
            "HOME": str(home),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        },
    }
    configure_real_reviewer(repo, reviewer)


def submits(*reviews: dict[str, Any]) -> Script:
    """Each reviewer run: one create_review call, then a closing sentence."""
    rules: list[Rule] = []
    for arguments in reviews:
        call = {"change_id": "add-oauth", **arguments}
        rules.append(Rule(Reply.tool(TOOL, **call), Match(tool=TOOL, tool_result=False)))
        rules.append(Rule(Reply(text="Review submitted."), Match(tool_result=True)))
    return Script(anthropic=rules)


def impl(repo: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "impl", "add-oauth", *flags],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        env={**os.environ, "ANTHROPIC_API_KEY": "sk-stub-not-a-real-key"},
    )


def first_turns(stub: StubLLMServer) -> list[LoggedRequest]:
    return [r for r in stub.model_requests("anthropic") if not r.tool_result]


def test_claude_reviewer_approves_through_create_review(repo: Path, claude_bin: Path) -> None:
    """Scenario "Structured Implementation Review" with the real claude CLI and MCP server."""
    plan_approved(repo)
    with StubLLMServer(submits(review("APPROVED"))) as stub:
        configure(repo, claude_bin, stub)
        result = impl(repo)
        (turn,) = first_turns(stub)
    assert result.returncode == 0, result.stderr
    assert "add-oauth is complete. Next: phasegate archive add-oauth" in result.stdout
    recorded = read_review(repo / "changes/add-oauth/REVIEW.md")
    assert recorded is not None and recorded.verdict.value == "APPROVED"
    assert changes(repo).state("add-oauth").phase.value == "complete"
    assert {TOOL, "mcp__phasegate__get_tasks"} <= set(turn.tools)
    assert not {"Write", "Edit", "Bash"} & set(turn.tools)  # the reviewer is read-only
    assert "Call the `create_review` tool" in turn.prompt


def test_claude_reviewer_needs_fix_then_approves(repo: Path, claude_bin: Path) -> None:
    """WF-R4: NEEDS_FIX -> auto-fix round -> review again -> APPROVED -> complete."""
    plan_approved(repo)
    with StubLLMServer(submits(review("NEEDS_FIX", FINDING), review("APPROVED"))) as stub:
        configure(repo, claude_bin, stub)
        result = impl(repo)
        turns = first_turns(stub)
    assert result.returncode == 0, result.stderr
    assert len(turns) == 2
    assert "Open findings" not in turns[0].prompt
    assert_fixed_once_then_complete(repo)


def test_claude_reviewer_major_issues_stop_for_a_person(repo: Path, claude_bin: Path) -> None:
    """WF-R4: MAJOR_ISSUES -> stay implementing, stop with the findings shown (exit 4)."""
    plan_approved(repo)
    major = review("MAJOR_ISSUES", {**FINDING, "description": "Tokens stored in plain text"})
    with StubLLMServer(submits(major)) as stub:
        configure(repo, claude_bin, stub)
        result = impl(repo)
    assert result.returncode == ExitCode.BLOCKED, result.stderr
    assert "[high] app/oauth.py:3: Tokens stored in plain text" in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "phasegate: error: add-oauth: manual fix required: the reviewer found MAJOR_ISSUES"
        )
    )
    assert changes(repo).state("add-oauth").phase.value == "implementing"
