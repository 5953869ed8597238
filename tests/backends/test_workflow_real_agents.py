"""The feature workflow's specify phase run by the real agent CLIs (and a chat model) on the stub.

Brainstorm is done by a scripted agent first, so each test spends its CLI
runs on the phase under test. Executor and reviewers come from the config,
exactly as a user would bind them.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import (
    APPROVE,
    REJECT,
    STUB_KEY,
    claude_settings,
    codex_settings,
    fake_cli,
    fake_settings,
    gemini_settings,
    init_git_repo,
    openai_settings,
)

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import read_meta

from phasegate.agents.base import Backend
from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.errors import AgentError
from phasegate.testing import LoggedRequest, Match, Reply, Rule, Script, StubLLMServer, Usage

ITEM_DIR = Path("docs/features/item")
SPEC_V1 = "# Spec\n\nRate limit requests per client.\n"
SPEC_V2 = SPEC_V1 + "\n## Acceptance criteria\n\n- 429 after 100 requests a minute\n"
BRAINSTORM = {
    "executor": {"brainstorm": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\nideas\n"}}]},
    "*": {"*": [{"verdict": APPROVE}]},
}
SCRIPTED_EXECUTOR = {"executor": {"specify": [{"write": {"{item_dir}/spec.md": SPEC_V1}}]}}


def _repo(root: Path, config: dict[str, Any], mode: str = "standard", **item: Any) -> Repo:
    """A repository whose item finished brainstorm (scripted) and stands before specify."""
    init_git_repo(root)
    repo = Repo(root, Config.model_validate({"retries": {"agent": 0}, **config}))
    repo.new("item", mode=mode, description=item.get("description", "Add rate limiting"))
    scripted = ScriptedBackend(script=BRAINSTORM)
    repo.run("item", backends={"default": scripted}, options=RunOptions(until="brainstorm"))
    return repo


def _specify(repo: Repo, backends: dict[str, Backend] | None = None) -> dict[str, Any]:
    repo.run("item", backends=backends, options=RunOptions(until="specify"))
    state: dict[str, Any] = read_meta(repo.root / ITEM_DIR)
    return state


def _journal(repo: Repo) -> list[dict[str, Any]]:
    lines = (repo.root / ITEM_DIR / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _finished(repo: Repo, role: str) -> list[dict[str, Any]]:
    return [
        e
        for e in _journal(repo)
        if e["event"] == "agent.finished" and e["role"] == role and e["phase"] == "specify"
    ]


def claude_executor(spec: Path) -> Any:
    """Claude writes spec.md with its Write tool; to revise it, it reads it first (as it must)."""

    def handler(request: LoggedRequest) -> Reply | None:
        revising = "Feedback to address" in request.prompt
        if not request.tool_result:
            if revising:
                return Reply.tool("Read", file_path=str(spec))
            return Reply.tool("Write", file_path=str(spec), content=SPEC_V1)
        if "successfully" in request.last:  # Write's result: the turn is over
            return Reply(text="Wrote spec.md")
        return Reply.tool("Write", file_path=str(spec), content=SPEC_V2)

    return handler


def reviewer_verdict(request: LoggedRequest) -> dict[str, Any]:
    """Approve only a spec with acceptance criteria (so the revision must reach the reviewer)."""
    return APPROVE if "## Acceptance criteria" in request.prompt else REJECT


@pytest.mark.cli_e2e
def test_claude_executor_and_codex_reviewer_reject_then_approve(
    claude_bin: Path, codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    """Cross-model review: codex rejects claude's spec once, approves the revision."""
    root = tmp_path / "repo"
    script = Script(
        anthropic=[claude_executor(root / ITEM_DIR / "spec.md")],
        openai=[lambda r: Reply.json(reviewer_verdict(r)) if r.schema else None],
    )
    with StubLLMServer(script) as stub:
        config = {
            "roles": {"executor": {"backend": "claude"}, "default": {"backend": "codex"}},
            "backends": {
                "claude": claude_settings(stub, home),
                "codex": codex_settings(stub, home),
            },
        }
        repo = _repo(root, config)
        state = _specify(repo)
        executor_turns = [r for r in stub.model_requests("anthropic") if not r.tool_result]
    specify = state["phases"]["specify"]
    assert (specify["iterations"], specify["review"]) == (2, "approved")
    assert (root / ITEM_DIR / "spec.md").read_text() == SPEC_V2
    assert "No acceptance criteria" in executor_turns[1].prompt
    verdicts = [i["approved"] for i in state["engine"]["iterations"] if i["phase"] == "specify"]
    assert verdicts == [False, True]


@pytest.mark.cli_e2e
def test_usage_cost_and_sessions_reach_journal_and_status(
    claude_bin: Path, codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    """Every call's tokens, cost and session id are journaled and summed per phase in status."""
    root = tmp_path / "repo"
    write_spec = claude_executor(root / ITEM_DIR / "spec.md")

    def cached(request: LoggedRequest) -> Reply:
        reply = write_spec(request)
        return replace(reply, usage=Usage(cache_read_tokens=500))

    script = Script(
        anthropic=[cached],
        openai=[Rule(Reply.json(APPROVE), Match(schema=True))],
    )
    with StubLLMServer(script) as stub:
        config = {
            "roles": {"executor": {"backend": "claude"}, "default": {"backend": "codex"}},
            "backends": {
                "claude": claude_settings(stub, home),
                "codex": codex_settings(stub, home),
            },
        }
        repo = _repo(root, config, mode="hotfix")
        _specify(repo)
    (executor,) = _finished(repo, "executor")
    (reviewer,) = _finished(repo, "chain-reviewer")
    assert executor["cost_usd"] > 0 and executor["session_id"]
    assert executor["usage"]["input_tokens"] == 200  # two model turns of 100
    assert reviewer["session_id"] and reviewer["usage"]["output_tokens"] == 20
    phase = next(p for p in repo.status("item")["phases"] if p["name"] == "specify")
    assert phase["usage"]["calls"] == 2
    assert phase["usage"]["inputTokens"] == 300
    assert phase["usage"]["cacheReadTokens"] == 1000  # two claude turns of 500
    assert phase["usage"]["costUsd"] == pytest.approx(executor["cost_usd"])


@pytest.mark.cli_e2e
def test_gemini_reviewer_reject_then_approve(
    claude_bin: Path, gemini_bin: Path, home: Path, tmp_path: Path
) -> None:
    """The same phase with gemini as reviewer: its JSON text verdicts drive the loop."""
    root = tmp_path / "repo"
    script = Script(
        anthropic=[claude_executor(root / ITEM_DIR / "spec.md")],
        gemini=[lambda r: Reply(text=json.dumps(reviewer_verdict(r)))],
    )
    with StubLLMServer(script) as stub:
        config = {
            "roles": {"executor": {"backend": "claude"}, "default": {"backend": "gemini"}},
            "backends": {
                "claude": claude_settings(stub, home),
                "gemini": gemini_settings(stub, home),
            },
        }
        repo = _repo(root, config)
        state = _specify(repo)
    specify = state["phases"]["specify"]
    assert (specify["iterations"], specify["review"]) == (2, "approved")
    sources = [i["source"] for i in state["engine"]["iterations"] if i["phase"] == "specify"]
    assert sources == ["json-text", "json-text"]


def test_openai_chat_model_as_executor_and_reviewer(home: Path, tmp_path: Path) -> None:
    """A chat model writes spec.md through files-in-JSON and reviews it in JSON mode."""
    root = tmp_path / "repo"

    def chat(request: LoggedRequest) -> Reply | None:
        if "You cannot run tools or edit files yourself" in request.system:
            content = SPEC_V2 if "Feedback to address" in request.prompt else SPEC_V1
            files = [{"path": str(ITEM_DIR / "spec.md"), "content": content}]
            return Reply.json({"summary": "Wrote the spec", "files": files, "delete": []})
        return Reply.json(reviewer_verdict(request))

    with StubLLMServer(Script(openai=[chat])) as stub:
        config = {
            "roles": {"default": {"backend": "openai"}},
            "backends": {"openai": openai_settings(stub)},
        }
        repo = _repo(root, config)
        state = _specify(repo)
    specify = state["phases"]["specify"]
    assert (specify["iterations"], specify["review"]) == (2, "approved")
    assert (root / ITEM_DIR / "spec.md").read_text() == SPEC_V2


@pytest.mark.cli_e2e
def test_garbage_verdict_is_unclear_and_not_approved(
    codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    """A verdict that does not fit the schema is recorded as unclear, never as approval."""
    garbage = {"approved": "yes", "issues": "none", "summary": 7}
    with StubLLMServer(Script(openai=[Rule(Reply.json(garbage), Match(schema=True))])) as stub:
        config = {
            "roles": {"default": {"backend": "codex"}},
            "backends": {"codex": codex_settings(stub, home)},
        }
        repo = _repo(tmp_path / "repo", config, mode="hotfix")
        state = _specify(repo, {"executor": ScriptedBackend(script=SCRIPTED_EXECUTOR)})
    (iteration,) = [i for i in state["engine"]["iterations"] if i["phase"] == "specify"]
    assert (iteration["approved"], iteration["unclear"]) == (False, True)
    assert state["phases"]["specify"]["review"] == "concerns"


@pytest.mark.cli_e2e
def test_hung_reviewer_is_killed_recorded_and_retried(
    codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    """A reviewer that never answers is killed at the timeout, journaled as failed, retried."""
    script = Script(
        openai=[
            Rule(Reply.stall("thinking"), times=1),
            Rule(Reply.json(APPROVE), Match(schema=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        config = {
            "roles": {"default": {"backend": "codex", "timeout": 3}},
            "backends": {"codex": codex_settings(stub, home)},
            "retries": {"agent": 1},
        }
        repo = _repo(tmp_path / "repo", config, mode="hotfix")
        state = _specify(repo, {"executor": ScriptedBackend(script=SCRIPTED_EXECUTOR)})
    (failed,) = [e for e in _journal(repo) if e["event"] == "agent.failed"]
    assert failed["role"] == "chain-reviewer" and "did not finish within 3s" in failed["error"]
    assert state["phases"]["specify"]["review"] == "approved"


def test_agent_exiting_before_reading_its_prompt_fails_each_attempt(tmp_path: Path) -> None:
    """BrokenPipe: each attempt is journaled with the exit status; then the run stops clearly."""
    binary = fake_cli(tmp_path / "bin")
    config = {
        "roles": {"default": {"backend": "claude"}},
        "backends": {"claude": fake_settings(binary, "exit-early")},
        "retries": {"agent": 1},
    }
    # A request this long fills the pipe, so the early exit is always seen while writing.
    repo = _repo(tmp_path / "repo", config, mode="hotfix", description="rate limit " * 20_000)
    with pytest.raises(AgentError, match=r"after 2 attempts: .*status 3 before reading"):
        _specify(repo)
    failures = [e for e in _journal(repo) if e["event"] == "agent.failed"]
    assert [f["tries"] for f in failures] == [1, 2]
    assert all("broken pipe" in f["error"] for f in failures)


@pytest.mark.cli_e2e
def test_secret_echoed_by_an_agent_never_reaches_disk(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    """The provider key an agent prints is masked in the journal, state and review history."""
    root = tmp_path / "repo"
    spec = root / ITEM_DIR / "spec.md"

    def leaky(request: LoggedRequest) -> Reply:
        if request.tool_result:
            return Reply(text=f"Done. Debug: ANTHROPIC_API_KEY={STUB_KEY}")
        return Reply.tool("Write", file_path=str(spec), content=SPEC_V1)

    reviewer = ScriptedBackend(
        script={"*": {"*": [{"verdict": {**REJECT, "summary": f"saw {STUB_KEY}"}}]}}
    )
    with StubLLMServer(Script(anthropic=[leaky])) as stub:
        config = {
            "roles": {"default": {"backend": "claude"}},
            "backends": {"claude": claude_settings(stub, home)},
        }
        repo = _repo(root, config, mode="hotfix")
        _specify(repo, {"chain-reviewer": reviewer})
    for name in (".journal.jsonl", ".meta.json", ".review-history.md"):
        assert STUB_KEY not in (root / ITEM_DIR / name).read_text(), name
    assert "[REDACTED]" in (root / ITEM_DIR / ".journal.jsonl").read_text()
