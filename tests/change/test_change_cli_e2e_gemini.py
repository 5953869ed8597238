"""End to end: the real Gemini CLI as the change workflow's reviewer, against the stub.

The reviewer is the pinned ``gemini`` binary run by phasegate's gemini
backend. Gemini takes MCP servers only from settings files, so the backend
gives each call its own settings overlay (``GEMINI_CLI_HOME``) declaring
phasegate's server with ``includeTools`` and policy rules allowing exactly
the listed tools; the reviewer stays in ``plan`` mode. The stub makes the
model call ``mcp_phasegate_create_review``: the tool writes REVIEW.md and the
phase follows the verdict it recorded.
"""

from __future__ import annotations

import json
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

from phasegate.agents.base import Access, AgentRequest, McpServer, PromptPart
from phasegate.agents.gemini import GeminiBackend
from phasegate.change import read_review
from phasegate.errors import ConfigError
from phasegate.testing import Handler, LoggedRequest, Match, Reply, Rule, Script, StubLLMServer
from phasegate.testing.clis import STUB_API_KEY, find_cli, gemini_env

pytestmark = pytest.mark.cli_e2e

TOOL = "mcp_phasegate_create_review"
REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL = "gemini-2.5-flash"


@pytest.fixture
def gemini_bin() -> Path:
    path = find_cli("gemini", REPO_ROOT)
    if path is None:
        pytest.skip("node_modules/.bin/gemini is not installed (run `npm ci` at the repo root)")
    return path


def reviewer_settings(repo: Path, gemini: Path, stub: StubLLMServer) -> dict[str, Any]:
    """The gemini backend against the stub, with its own GEMINI_CLI_HOME and settings."""
    home = repo.parent / "home"
    gemini_home = home / "gemini-home"
    gemini_env(stub.url, gemini_home)  # API-key auth selected, one attempt per request
    return {
        "binary": str(gemini),
        "model": MODEL,
        "base_url": stub.url,
        "config_dir": str(gemini_home),
        "env": {"HOME": str(home)},
    }


def configure(repo: Path, gemini: Path, stub: StubLLMServer) -> None:
    """Scripted implementer; the reviewer is the gemini backend pointed at the stub."""
    reviewer = {"backend": "gemini", **reviewer_settings(repo, gemini, stub)}
    configure_real_reviewer(repo, reviewer)


def submits(*reviews: dict[str, Any]) -> Script:
    """Each reviewer run: one create_review call, then a closing sentence."""
    rules: list[Rule | Handler] = []
    for arguments in reviews:
        call = {"change_id": "add-oauth", **arguments}
        rules.append(Rule(Reply.tool(TOOL, **call), Match(tool=TOOL, tool_result=False)))
        rules.append(Rule(Reply(text="Review submitted."), Match(tool_result=True)))
    return Script(gemini=rules)


def impl(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "impl", "add-oauth"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        env={**os.environ, "GEMINI_API_KEY": STUB_API_KEY},
    )


def first_turns(stub: StubLLMServer) -> list[LoggedRequest]:
    """The reviewer's opening requests (Gemini's own utility calls left out)."""
    return [r for r in stub.model_requests("gemini") if not r.tool_result and not r.side]


def test_gemini_reviewer_approves_through_create_review(repo: Path, gemini_bin: Path) -> None:
    """Scenario "Structured Implementation Review" with the real gemini CLI and MCP server."""
    plan_approved(repo)
    settings_file = repo.parent / "home" / "gemini-home" / ".gemini" / "settings.json"
    with StubLLMServer(submits(review("APPROVED"))) as stub:
        configure(repo, gemini_bin, stub)
        before = settings_file.read_text()
        result = impl(repo)
        turns = first_turns(stub)
    assert result.returncode == 0, result.stderr
    (turn,) = turns
    assert "add-oauth is complete. Next: phasegate archive add-oauth" in result.stdout
    recorded = read_review(repo / "changes/add-oauth/REVIEW.md")
    assert recorded is not None and recorded.verdict.value == "APPROVED"
    assert changes(repo).state("add-oauth").phase.value == "complete"
    mcp_tools = {name for name in turn.tools if name.startswith("mcp_")}
    assert mcp_tools == {TOOL, "mcp_phasegate_get_change", "mcp_phasegate_get_tasks"}
    assert "run_shell_command" not in turn.tools  # plan mode: the reviewer stays read-only
    assert "Call the `create_review` tool" in turn.prompt
    assert settings_file.read_text() == before  # the user's settings were not touched


def test_gemini_reviewer_needs_fix_then_approves(repo: Path, gemini_bin: Path) -> None:
    """WF-R4: NEEDS_FIX -> auto-fix round -> review again -> APPROVED -> complete."""
    plan_approved(repo)
    with StubLLMServer(submits(review("NEEDS_FIX", FINDING), review("APPROVED"))) as stub:
        configure(repo, gemini_bin, stub)
        result = impl(repo)
        turns = first_turns(stub)
    assert result.returncode == 0, result.stderr
    assert len(turns) == 2
    assert_fixed_once_then_complete(repo)


def test_only_the_listed_mcp_tools_are_offered_and_callable(
    repo: Path, gemini_bin: Path, monkeypatch: pytest.MonkeyPatch
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
            return Reply.tool("mcp_phasegate_get_change", change_id="add-oauth")
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
    monkeypatch.setenv("GEMINI_API_KEY", STUB_API_KEY)
    with StubLLMServer(Script(gemini=[agent])) as stub:
        settings = reviewer_settings(repo, gemini_bin, stub)
        # Gemini accepts comments in settings.json; the copy phasegate makes must too.
        user_file = Path(settings["config_dir"]) / ".gemini" / "settings.json"
        user_file.write_text("// the user's own settings\n" + user_file.read_text())
        result = GeminiBackend(settings).run(request)
        turns = [r for r in stub.model_requests("gemini") if not r.side]
    assert result.ok, result.error
    assert [name for name in turns[0].tools if name.startswith("mcp_")] == [
        "mcp_phasegate_get_change"
    ]
    assert r"\"phase\": \"challenged\"" in turns[1].last  # get_change ran and answered
    refused = json.loads(turns[2].last)
    assert refused["error"].startswith(f'Tool "{TOOL}" not found')
    assert not (repo / "changes/add-oauth/REVIEW.md").exists()


def test_a_server_name_gemini_would_misread_is_refused(
    repo: Path, gemini_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini splits mcp_<server>_<tool> at the first '_': such a name is a config error."""
    server = McpServer(name="phase_gate", command=sys.executable, tools=("get_change",))
    request = AgentRequest(
        role="reviewer",
        prompt=(PromptPart("Task", "Review."),),
        workdir=repo,
        mcp_servers=(server,),
    )
    monkeypatch.setenv("GEMINI_API_KEY", STUB_API_KEY)
    with StubLLMServer() as stub:
        backend = GeminiBackend(reviewer_settings(repo, gemini_bin, stub))
        with pytest.raises(ConfigError, match="MCP server name 'phase_gate' must use only"):
            backend.run(request)
        assert stub.model_requests("gemini") == []
