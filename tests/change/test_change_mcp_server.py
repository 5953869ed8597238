"""``phasegate mcp`` as a real stdio subprocess, spoken to with the official ``mcp`` client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types as types
from change_helpers import FINDING, ChangeAgents, changes, plan_approved, review
from mcp import Client, StdioServerParameters
from test_change_state_machine import write_state

from phasegate.agents.base import AgentRequest, McpServer
from phasegate.change import read_review

T = TypeVar("T")
REVIEW_MD = Path("changes/add-oauth/REVIEW.md")


def server(repo: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "phasegate", "mcp", "--repo", str(repo), *extra],
        env={"PATH": os.environ.get("PATH", "")},
    )


def session(params: StdioServerParameters, work: Callable[[Client], Awaitable[T]]) -> T:
    """Connect to the server, run ``work``, disconnect."""

    async def main() -> T:
        async with Client(params, mode="legacy") as client:
            return await work(client)

    return anyio.run(main)


def awaiting_review(repo: Path) -> None:
    write_state(repo, "implementing", epoch=3, impl={"step": "review", "iteration": 1})


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_server_offers_only_the_tools_it_was_started_with(repo: Path) -> None:
    """Least privilege: the server offers only the tools it was started with."""

    async def names(client: Client) -> list[str]:
        return [tool.name for tool in (await client.list_tools()).tools]

    write_state(repo, "challenged")  # --change names a change that exists
    params = server(repo, "--change", "add-oauth", "--tools", "get_change,get_tasks")
    assert session(params, names) == ["get_change", "get_tasks"]


def test_create_review_schema_is_advertised_to_agents(repo: Path) -> None:
    """Agents see the verdicts and the finding fields they must give."""

    async def schema(client: Client) -> dict[str, Any]:
        (tool,) = [t for t in (await client.list_tools()).tools if t.name == "create_review"]
        return dict(tool.input_schema)

    found = session(server(repo), schema)
    assert found["properties"]["verdict"]["enum"] == ["APPROVED", "NEEDS_FIX", "MAJOR_ISSUES"]
    item = found["properties"]["findings"]["items"]
    assert item["required"] == ["severity", "file", "line", "description"]


def test_create_review_over_stdio_writes_review_md(repo: Path) -> None:
    """WF-R4 step 2 over the real protocol: the tool call writes REVIEW.md."""
    awaiting_review(repo)

    async def submit(client: Client) -> types.CallToolResult:
        args = {"change_id": "add-oauth", **review("NEEDS_FIX", FINDING)}
        return await client.call_tool("create_review", args)

    result = session(server(repo, "--change", "add-oauth"), submit)
    assert not result.is_error
    assert json.loads(text_of(result))["round"] == "3.1"
    recorded = read_review(repo / REVIEW_MD)
    assert recorded is not None and recorded.verdict.value == "NEEDS_FIX"


def test_a_bad_call_over_stdio_is_a_tool_error_and_writes_nothing(repo: Path) -> None:
    """create_review over MCP: a bad call is a clear tool error and writes nothing."""
    awaiting_review(repo)

    async def submit(client: Client) -> types.CallToolResult:
        args = {"change_id": "add-oauth", **review("NEEDS_FIX", {**FINDING, "line": -4})}
        return await client.call_tool("create_review", args)

    result = session(server(repo, "--change", "add-oauth"), submit)
    assert result.is_error
    assert text_of(result) == (
        "create_review: findings.0.line: Input should be greater than or equal to 1"
    )
    assert not (repo / REVIEW_MD).exists()


def mcp_reviewer(verdict_args: dict[str, Any]) -> Callable[[AgentRequest], str]:
    """A reviewer that acts like an agent CLI: it starts the MCP server it was given."""

    def act(request: AgentRequest) -> str:
        (given,) = request.mcp_servers
        assert isinstance(given, McpServer)
        params = StdioServerParameters(
            command=given.command, args=list(given.args), env=dict(given.env) or None
        )

        async def submit(client: Client) -> types.CallToolResult:
            args = {"change_id": request.labels["item"], **verdict_args}
            return await client.call_tool("create_review", args)

        result = session(params, submit)
        return text_of(result)

    return act


def test_impl_completes_when_the_reviewer_submits_through_the_real_server(repo: Path) -> None:
    """Scenario "Structured Implementation Review" end to end over stdio MCP."""
    plan_approved(repo)
    agents = ChangeAgents(repo, reviewer=mcp_reviewer(review("APPROVED")))
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "complete"
    recorded = read_review(repo / REVIEW_MD)
    assert recorded is not None and recorded.verdict.value == "APPROVED"


def test_server_ends_quietly_when_its_client_goes_away(repo: Path) -> None:
    """Seed 002 robustness: a closed pipe ends the MCP session, not with a traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "mcp", "--repo", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        request = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        proc.stdout.close()  # the client is gone before the answer is written
        proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.close()
        proc.wait(timeout=30)
        assert proc.stderr is not None
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
