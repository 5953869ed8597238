"""``phasegate mcp`` refuses unusable options at start and answers every call the same way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from change_helpers import FINDING, review
from mcp import Client
from test_change_mcp_server import server, session, text_of
from test_change_state_machine import write_state

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


def call(repo: Path, name: str, args: dict[str, Any]) -> types.CallToolResult:
    async def work(client: Client) -> types.CallToolResult:
        return await client.call_tool(name, args)

    return session(server(repo, "--change", "add-oauth"), work)


def test_get_tasks_result_is_redacted(repo: Path) -> None:
    write_state(repo, "implementing", impl={"step": "implement", "iteration": 1})
    (repo / "changes/add-oauth/tasks.md").write_text(
        f"## 1. Data Layer\n\n- [ ] 1.1 use OPENAI_API_KEY={SECRET} in setup\n"
    )
    result = call(repo, "get_tasks", {"change_id": "add-oauth"})
    assert not result.is_error, text_of(result)
    assert SECRET not in text_of(result)
    assert SECRET not in json.dumps(result.structured_content)
    (layer,) = json.loads(text_of(result))["layers"]
    assert "OPENAI_API_KEY" in layer["tasks"][0]["text"]


def test_blank_summary_is_refused_like_an_empty_one(repo: Path) -> None:
    write_state(repo, "implementing", epoch=3, impl={"step": "review", "iteration": 1})
    args = {"change_id": "add-oauth", **review("NEEDS_FIX", FINDING), "summary": "   "}
    result = call(repo, "create_review", args)
    assert result.is_error
    assert text_of(result).startswith("create_review: summary: ")
    assert not (repo / "changes/add-oauth/REVIEW.md").exists()


def test_findings_that_are_not_a_list_say_list(repo: Path) -> None:
    write_state(repo, "implementing", epoch=3, impl={"step": "review", "iteration": 1})
    args = {"change_id": "add-oauth", **review("NEEDS_FIX", FINDING), "findings": "x"}
    result = call(repo, "create_review", args)
    assert result.is_error
    assert text_of(result) == "create_review: findings: Input should be a valid list"


@pytest.mark.parametrize("tool", ["get_change", "get_tasks"])
def test_read_tools_refuse_unknown_fields(repo: Path, tool: str) -> None:
    write_state(repo, "implementing", impl={"step": "implement", "iteration": 1})
    result = call(repo, tool, {"change_id": "add-oauth", "x": 1})
    assert result.is_error
    assert text_of(result) == f"{tool}: x: unknown field"


def start(repo: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", "mcp", "--repo", str(repo), *options],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (("--change", "../x"), "--change"),
        (("--change", "nosuch"), "--change"),
        (("--tools", ","), "--tools"),
    ],
)
def test_unusable_options_are_refused_at_start(
    repo: Path, options: tuple[str, ...], named: str
) -> None:
    write_state(repo, "implementing", impl={"step": "implement", "iteration": 1})
    done = start(repo, *options)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], done.stderr
    assert done.stdout == ""
