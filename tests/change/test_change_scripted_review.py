"""A whole change through the CLI with a YAML-scripted agent: `plan`, then `impl`, whose
reviewer approves by calling phasegate's `create_review` MCP tool from its script (as a
real agent CLI would), then `archive`, which announces the change completed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from change_helpers import changes, plan_approved
from ruamel.yaml import YAML

from cli_process import run_cli
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import McpCall, ScriptedBackend, ScriptedReply
from phasegate.change import read_review

RECORDER = """\
import json, sys
from pathlib import Path
folder = Path(sys.argv[1])
folder.mkdir(exist_ok=True)
(folder / f"{len(list(folder.iterdir()))}.json").write_text(sys.stdin.read())
"""

REVIEW = {
    "change_id": "{item}",
    "verdict": "APPROVED",
    "summary": "The token model matches the spec.",
    "findings": [],
    "tests_run": [{"command": "pytest -q", "passed": True}],
}


def script(review_calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "proposal-author": {
            "proposal": [
                {
                    "write": {
                        "{item_dir}/proposal.md": "---\nchange_id: oauth\nspecs: []\n---\n# P\n"
                    }
                }
            ],
            "tasks": [{"write": {"{item_dir}/tasks.md": "## 1. Data Layer\n- [ ] 1.1 x\n"}}],
        },
        "challenger": {"tasks": [{"json": {"verdict": "APPROVED", "summary": "ok", "issues": []}}]},
        "implementer": {
            "*": [{"write": {"app/models.py": "TOKEN = 'x'\n"}, "text": "Added the model."}]
        },
        "reviewer": {"review": [{"mcp": review_calls, "text": "Reviewed."}]},
    }


def configure(repo: Path, tmp_path: Path, agents: dict[str, Any]) -> Path:
    """Scripted agents and a notify command recording each event; where it records."""
    recorder = tmp_path / "recorder.py"
    recorder.write_text(RECORDER)
    heard = tmp_path / "heard"
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        "notify": {"command": f"{sys.executable} {recorder} {heard}"},
    }
    (repo / ".phasegate").mkdir(exist_ok=True)
    yaml = YAML(typ="safe", pure=True)
    for name, data in (("config.yaml", config), ("agents.yaml", agents)):
        with open(repo / ".phasegate" / name, "w") as handle:
            yaml.dump(data, handle)
    return heard


def events(folder: Path) -> list[dict[str, Any]]:
    if not folder.exists():
        return []
    return [json.loads(p.read_text()) for p in sorted(folder.iterdir())]


def journal(repo: Path, item: str) -> list[dict[str, Any]]:
    lines = (repo / "changes" / item / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_a_scripted_reviewer_approves_through_create_review(repo: Path, tmp_path: Path) -> None:
    calls = [
        {"server": "phasegate", "tool": "get_tasks", "arguments": {"change_id": "{item}"}},
        {"tool": "create_review", "arguments": REVIEW},
    ]
    heard = configure(repo, tmp_path, script(calls))
    planned = run_cli(repo, "plan", "oauth", "Add OAuth")
    assert planned.returncode == 0, planned.stderr
    assert "Next: phasegate impl oauth" in planned.stdout

    done = run_cli(repo, "impl", "oauth")
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Next: phasegate archive oauth" in done.stdout
    review = (repo / "changes" / "oauth" / "REVIEW.md").read_text()
    assert "**Verdict: APPROVED**" in review
    assert "The token model matches the spec." in review
    assert "phase: complete" in (repo / "changes" / "oauth" / "STATE.yaml").read_text()
    # The tool calls and their results are in the reviewer's record, as a real agent's.
    finished = [
        e
        for e in journal(repo, "oauth")
        if e.get("event") == "agent.finished" and "[scripted]" in e.get("stderr", "")
    ]
    assert finished, "the reviewer's call is journaled"
    stderr = finished[-1]["stderr"]
    assert "[scripted] phasegate.get_tasks: ok:" in stderr
    assert "[scripted] phasegate.create_review: ok:" in stderr
    assert events(heard) == []

    archived = run_cli(repo, "archive", "oauth")
    assert archived.returncode == 0, archived.stderr
    (event,) = events(heard)
    assert (event["event"], event["item"], event["command"]) == ("completed", "oauth", "archive")
    assert "archived to changes/archive/" in event["message"]
    assert not (repo / "changes" / "oauth").exists()


def test_a_scripted_reviewer_cannot_call_a_tool_it_was_not_given(
    repo: Path, tmp_path: Path
) -> None:
    """A tool outside the reviewer's allow-list is denied, as an agent CLI denies it: no
    review is recorded, and impl says why (the denial) instead of approving."""
    calls = [{"server": "phasegate", "tool": "write_file", "arguments": {"path": "x"}}]
    configure(repo, tmp_path, script(calls))
    assert run_cli(repo, "plan", "oauth", "Add OAuth").returncode == 0
    stopped = run_cli(repo, "impl", "oauth")
    assert stopped.returncode == 6, stopped.stderr + stopped.stdout
    assert "without calling the create_review tool" in stopped.stderr
    assert "permission denied for: mcp__phasegate__write_file" in stopped.stderr
    assert not (repo / "changes" / "oauth" / "REVIEW.md").exists()


def test_a_refused_create_review_records_nothing(repo: Path, tmp_path: Path) -> None:
    """The server's refusal (an APPROVED review with a high finding) reaches the record."""
    bad = dict(
        REVIEW,
        findings=[{"severity": "high", "description": "no tests", "file": "a.py", "line": 1}],
    )
    configure(repo, tmp_path, script([{"tool": "create_review", "arguments": bad}]))
    assert run_cli(repo, "plan", "oauth", "Add OAuth").returncode == 0
    stopped = run_cli(repo, "impl", "oauth")
    assert stopped.returncode == 6, stopped.stderr + stopped.stdout
    assert "without calling the create_review tool" in stopped.stderr
    finished = [
        e
        for e in journal(repo, "oauth")
        if e.get("event") == "agent.finished" and "[scripted]" in e.get("stderr", "")
    ]
    assert "create_review: refused:" in finished[-1]["stderr"]
    assert "cannot list high-severity findings" in finished[-1]["stderr"]


def test_a_python_scripted_reply_calls_create_review(repo: Path) -> None:
    """From Python, a ScriptedReply's ``mcp`` makes the same calls."""
    agents = plan_approved(repo)

    def handler(request: AgentRequest) -> ScriptedReply | None:
        if request.role == "reviewer":
            return ScriptedReply(text="Reviewed.", mcp=(McpCall("create_review", REVIEW),))
        return agents(request)

    outcome = changes(repo).impl(
        "add-oauth", backends={"default": ScriptedBackend(handler=handler)}
    )
    assert outcome.status == "complete", outcome.message  # type: ignore[attr-defined]
    recorded = read_review(repo / "changes" / "add-oauth" / "REVIEW.md")
    assert recorded is not None and recorded.verdict.value == "APPROVED"
    assert recorded.change_id == "add-oauth"
