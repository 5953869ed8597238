"""End to end: the real Codex CLI as the change workflow's reviewer, against the stub.

The reviewer is the pinned ``codex`` binary run by phasegate's codex backend,
given phasegate's MCP server through ``-c mcp_servers.phasegate.*`` with only
the listed tools enabled and pre-approved. Codex 0.169 defers MCP tools
behind its ``tool_search`` tool, so the stub model does what a real one does:
it searches first (a client-side ``tool_search_call``), then calls
``create_review`` in the ``mcp__phasegate`` namespace. The tool writes
REVIEW.md and the phase follows the verdict it recorded.
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

from codex_homes import codex_home
from phasegate.agents.base import Access, AgentRequest, McpServer, PromptPart
from phasegate.agents.codex import CodexBackend
from phasegate.change import read_review
from phasegate.testing import Handler, LoggedRequest, Match, Reply, Rule, Script, StubLLMServer
from phasegate.testing.clis import STUB_API_KEY, find_cli

pytestmark = pytest.mark.cli_e2e

TOOL = "mcp__phasegate__create_review"
REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL = "gpt-5.5"  # from Codex's bundled catalog


@pytest.fixture
def codex_bin() -> Path:
    path = find_cli("codex", REPO_ROOT)
    if path is None:
        pytest.skip("node_modules/.bin/codex is not installed (run `npm ci` at the repo root)")
    return path


def reviewer_settings(repo: Path, codex: Path, stub: StubLLMServer) -> dict[str, Any]:
    """The codex backend against the stub: its own CODEX_HOME, no plugin sync, no retries."""
    home = repo.parent / "home"
    return {
        "binary": str(codex),
        "model": MODEL,
        "base_url": stub.openai_url,
        "config_dir": str(codex_home(home)),  # outside the temporary folder: codex_homes
        "provider_options": {"request_max_retries": 0, "stream_max_retries": 0},
        "extra_args": ["--disable", "plugins", "-c", "analytics.enabled=false"],
        "env": {"HOME": str(home)},
    }


def configure(repo: Path, codex: Path, stub: StubLLMServer) -> None:
    """Scripted implementer; the reviewer is the codex backend pointed at the stub."""
    reviewer = {"backend": "codex", **reviewer_settings(repo, codex, stub)}
    configure_real_reviewer(repo, reviewer)


def submits(*reviews: dict[str, Any]) -> Script:
    """Each reviewer run: search for the tool, call create_review, then a closing sentence."""
    rules: list[Rule | Handler] = []
    for arguments in reviews:
        call = {"change_id": "add-oauth", **arguments}
        search = Reply.tool("tool_search", query="create_review", limit=8)
        rules.append(Rule(search, Match(tool="tool_search", tool_result=False)))
        # After the search its output (the tools found) is the last item.
        rules.append(Rule(Reply.tool(TOOL, **call), Match(last="create_review", tool_result=True)))
        rules.append(Rule(Reply(text="Review submitted."), Match(tool_result=True)))
    return Script(openai=rules)


def impl(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "impl", "add-oauth"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        env={**os.environ, "OPENAI_API_KEY": STUB_API_KEY},
    )


def test_codex_reviewer_approves_through_create_review(repo: Path, codex_bin: Path) -> None:
    """Scenario "Structured Implementation Review" with the real codex CLI and MCP server."""
    plan_approved(repo)
    with StubLLMServer(submits(review("APPROVED"))) as stub:
        configure(repo, codex_bin, stub)
        result = impl(repo)
        requests = stub.model_requests("openai")
    assert result.returncode == 0, result.stderr
    opening, searched, closing = requests
    assert "add-oauth is complete. Next: phasegate archive add-oauth" in result.stdout
    recorded = read_review(repo / "changes/add-oauth/REVIEW.md")
    assert recorded is not None and recorded.verdict.value == "APPROVED"
    assert changes(repo).state("add-oauth").phase.value == "complete"
    assert "Call the `create_review` tool" in opening.prompt
    assert "tool_search" in opening.tools and "create_review" not in opening.tools  # deferred
    assert "create_review" in searched.tools  # found by the search, then called
    assert '"written":"changes/add-oauth/REVIEW.md"' in closing.last  # the tool's answer
    assert stub.unused_rules() == []


def test_codex_reviewer_needs_fix_then_approves(repo: Path, codex_bin: Path) -> None:
    """WF-R4: NEEDS_FIX -> auto-fix round -> review again -> APPROVED -> complete."""
    plan_approved(repo)
    with StubLLMServer(submits(review("NEEDS_FIX", FINDING), review("APPROVED"))) as stub:
        configure(repo, codex_bin, stub)
        result = impl(repo)
        openings = [r for r in stub.model_requests("openai") if not r.tool_result]
    assert result.returncode == 0, result.stderr
    assert len(openings) == 2
    assert_fixed_once_then_complete(repo)


def test_only_the_listed_mcp_tools_are_offered_and_callable(
    repo: Path, codex_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server offers all its tools; the role lists get_change only, so only that one runs."""
    plan_approved(repo)
    server = McpServer(
        name="phasegate",
        command=sys.executable,
        args=("-m", "phasegate", "mcp", "--repo", str(repo), "--change", "add-oauth"),
        tools=("get_change",),
    )
    create = {"change_id": "add-oauth", **review("APPROVED")}

    def agent(request: LoggedRequest) -> Reply:
        if not request.tool_result:
            return Reply.tool("tool_search", query="create_review get_change change", limit=8)
        if "get_change" in request.last:  # the search's output: tools found
            return Reply.tool("mcp__phasegate__get_change", change_id="add-oauth")
        if "challenged" in request.last:  # get_change answered: now try create_review
            return Reply.tool(TOOL, **create)
        return Reply(text="done")

    request = AgentRequest(
        role="reviewer",
        prompt=(PromptPart("Task", "Review add-oauth."),),
        workdir=repo,
        access=Access.READ_ONLY,
        timeout=60.0,
        mcp_servers=(server,),
    )
    monkeypatch.setenv("OPENAI_API_KEY", STUB_API_KEY)
    with StubLLMServer(Script(openai=[agent])) as stub:
        result = CodexBackend(reviewer_settings(repo, codex_bin, stub)).run(request)
        requests = stub.model_requests("openai")
    assert result.ok, result.error
    opening, searched, answered, refused = requests
    assert "get_change" not in opening.tools and "tool_search" in opening.tools
    assert searched.last == "get_change"  # the search finds only the listed tool
    assert '"phase":"challenged"' in answered.last  # get_change ran and answered
    assert "unsupported call" in refused.last
    assert not (repo / "changes/add-oauth/REVIEW.md").exists()
