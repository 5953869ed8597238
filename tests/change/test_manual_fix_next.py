"""A change stopped for a fix by hand: every place names the same next command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
from change_helpers import FINDING, ChangeAgents, changes, plan_approved, review
from mcp import Client
from test_change_cli import phasegate
from test_change_mcp_server import server, session, text_of

from phasegate.change import ImplOptions

MAJOR = review("MAJOR_ISSUES", {**FINDING, "description": "Tokens are stored in plain text"})
NEXT = "phasegate impl add-oauth --review-only"


def stopped(repo: Path) -> ChangeAgents:
    agents = plan_approved(repo, reviews=[MAJOR, review("APPROVED")])
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "stopped", outcome.message
    return agents


def json_of(repo: Path, *args: str) -> Any:
    done = phasegate(repo, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_place_names_the_same_next_command(repo: Path) -> None:
    stopped(repo)
    assert json_of(repo, "status", "add-oauth", "--json")["nextCommand"] == NEXT
    (listed,) = [row for row in json_of(repo, "status", "--json") if row["id"] == "add-oauth"]
    assert listed["nextCommand"] == NEXT
    assert json_of(repo, "change", "status", "add-oauth", "--json")["next"] == NEXT
    (row,) = json_of(repo, "change", "list", "--json")
    assert row["next"] == NEXT

    async def get(client: Client) -> types.CallToolResult:
        return await client.call_tool("get_change", {"change_id": "add-oauth"})

    result = session(server(repo, "--change", "add-oauth"), get)
    assert json.loads(text_of(result))["next"] == NEXT


def test_impl_alone_answers_the_gate_by_default_not_by_flag(repo: Path) -> None:
    agents = stopped(repo)
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "complete", outcome.message
    journal = repo / "changes/add-oauth/.journal.jsonl"
    decisions = [
        e
        for e in map(json.loads, journal.read_text().splitlines())
        if e.get("event") == "decision" and e.get("id") == "manual-fix"
    ]
    assert [(e.get("answer"), e.get("by")) for e in decisions] == [("implement", "default")]


def test_review_only_answers_the_gate_by_flag(repo: Path) -> None:
    agents = stopped(repo)
    outcome = changes(repo).impl(
        "add-oauth",
        backends={"default": agents.backend()},
        options=ImplOptions(review_only=True),
    )
    assert outcome.status == "complete", outcome.message
    journal = repo / "changes/add-oauth/.journal.jsonl"
    decisions = [
        e
        for e in map(json.loads, journal.read_text().splitlines())
        if e.get("event") == "decision" and e.get("id") == "manual-fix"
    ]
    assert [(e.get("answer"), e.get("by")) for e in decisions] == [("review-only", "flag")]
