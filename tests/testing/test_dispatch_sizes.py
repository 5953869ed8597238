"""DispatchLog: the stub's model requests grouped by the agent call that made them.

The measurement behind ``bench/tokens.py``: the feature workflow's brainstorm
phase on the openai backend against the stub, the log as the run's event sink.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer
from phasegate.testing.dispatch_sizes import DispatchLog, estimated_tokens, request_bytes

APPROVE = {"approved": True, "issues": [], "summary": "fine"}
IDEAS = "# Brainstorm\n\nideas\n"


def _repo(root: Path) -> Path:
    root.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    (root / "README.md").write_text("# r\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
    return root


def test_each_call_gets_its_own_requests_and_phasegates_prompt_size(tmp_path: Path) -> None:
    """Two calls (executor, chain reviewer): each gets exactly the request it caused, the
    journaled size of phasegate's prompt, and the request's size in bytes; the role of the
    call in flight is what the script sees."""
    root = _repo(tmp_path / "repo")
    seen: list[str | None] = []
    logs: list[DispatchLog] = []

    def model(request: LoggedRequest) -> Reply:
        seen.append(logs[0].role)
        if logs[0].role == "executor":
            files = [{"path": "docs/features/item/brainstorm.md", "content": IDEAS}]
            return Reply.json({"summary": "wrote it", "files": files, "delete": []})
        return Reply.json(APPROVE)

    with StubLLMServer(Script(openai=[model])) as stub:
        log = DispatchLog(stub.model_requests)
        logs.append(log)
        settings = {"base_url": stub.openai_url, "model": "stub-chat-model"}
        config = {"roles": {"default": {"backend": "openai"}}, "backends": {"openai": settings}}
        repo = Repo(root, Config.model_validate(config))
        repo.new("item", mode="hotfix", description="Add rate limiting")
        repo.run("item", options=RunOptions(until="brainstorm"), sink=log)
        everything = stub.model_requests()
    assert seen == ["executor", "chain-reviewer"] and log.role is None
    executor, reviewer = log.dispatches
    assert (executor.role, reviewer.role) == ("executor", "chain-reviewer")
    assert (executor.backend, executor.access) == ("openai", "write")
    assert executor.requests == (everything[0],) and reviewer.requests == (everything[1],)
    assert "You cannot run tools or edit files yourself" in executor.requests[0].system
    assert "chain reviewer" in reviewer.requests[0].system
    lines = (root / "docs/features/item/.journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    journaled = [e["prompt_chars"] for e in events if e["event"] == "agent.dispatched"]
    assert [executor.prompt_chars, reviewer.prompt_chars] == journaled
    assert all(chars > 100 for chars in journaled)
    for dispatch, request in zip((executor, reviewer), everything, strict=True):
        sent = int(request.header("content-length") or 0)  # the bytes the client sent
        assert dispatch.first_bytes == dispatch.total_bytes == request_bytes(request) == sent
        assert dispatch.first_bytes > dispatch.prompt_chars  # the prompt is in the request
        assert dispatch.tools == () and dispatch.tool_bytes == 0
    assert estimated_tokens(executor.first_bytes) == round(executor.first_bytes / 4)
