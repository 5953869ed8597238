"""A server's Retry-After is kept by phasegate's own attempts (``retries.agent``): the next
attempt waits what the server asked, and says so; a wait past the call's time limit is not
made: the call fails at once, saying why, without spending its retry."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from backend_helpers import STUB_KEY

from cli_process import run_cli
from phasegate.testing import LoggedRequest, Reply, Rule, Script, StubLLMServer
from phasegate.workflow.example_files import copy_example

APPROVED = {"verdict": "APPROVED", "summary": "fine", "issues": []}
PLAN = "# Plan\n\nCount requests.\n\n## Tasks\n\n- [ ] T1 Add the limiter\n"


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(root, *args, env={"OPENAI_API_KEY": STUB_KEY})


def _repo(root: Path, stub: StubLLMServer, agent_timeout: float) -> Path:
    """The review-loop example: the planner scripted, the critic on the openai backend
    (the stub; the SDK's own retries off), one retry of phasegate's own."""
    root.mkdir()
    (root / "README.md").write_text("# sample\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    copy_example("review-loop", root)
    planner = {"planner": {"plan": [{"write": {"{item_dir}/plan.md": PLAN}}]}}
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(planner))
    (root / ".phasegate" / "config.yaml").write_text(
        "roles:\n"
        "  default: {backend: scripted}\n"
        "  critic: {backend: openai, model: stub-chat-model}\n"
        "backends:\n"
        "  scripted: {script: .phasegate/agents.yaml}\n"
        f"  openai: {{base_url: '{stub.openai_url}', max_retries: 0}}\n"
        f"timeouts: {{agent: {agent_timeout}}}\n"
        "retries: {agent: 1}\n"
    )
    made = _cli(root, "new", "limits", "--workflow", "review-loop")
    assert made.returncode == 0, made.stderr
    return root


def _script(retry_after: str) -> Script:
    def approve(request: LoggedRequest) -> Reply:
        return Reply(structured=APPROVED)

    busy = Reply.fail(429, "slow down", retry_after=retry_after)
    answers: list[Any] = [Rule(busy), approve]
    return Script(openai=answers)


def test_the_next_attempt_waits_what_the_server_asked(tmp_path: Path) -> None:
    with StubLLMServer(_script("2")) as stub:
        root = _repo(tmp_path / "repo", stub, agent_timeout=30)
        done = _cli(root, "run", "limits", "--until", "planning")
        first, second = stub.model_requests("openai")[:2]
    assert done.returncode == 0, done.stderr
    assert second.time - first.time >= 1.9, (first.time, second.time)
    assert "next attempt in 2s, as the server asked (Retry-After)" in done.stderr, done.stderr


def test_a_wait_past_the_limit_fails_at_once_without_spending_the_retry(
    tmp_path: Path,
) -> None:
    with StubLLMServer(_script("60")) as stub:
        root = _repo(tmp_path / "repo", stub, agent_timeout=10)
        done = _cli(root, "run", "limits")
        requests = stub.model_requests("openai")
    assert done.returncode == 6, (done.stdout, done.stderr)
    assert len(requests) == 1  # no second attempt that could only be refused again
    journal = (root / "work" / "limits" / ".journal.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in journal]
    dispatched = [e for e in events if e["event"] == "agent.dispatched" and e["role"] == "critic"]
    assert len(dispatched) == 1
    (failed,) = [e for e in events if e["event"] == "agent.failed"]
    assert failed["retry_after"] == 60 and failed["retry"] is False
    errors = [line for line in done.stderr.splitlines() if line.startswith("phasegate: error")]
    assert len(errors) == 1, done.stderr
    assert "critic" in errors[0] and "HTTP 429" in errors[0], errors
    assert "not tried again" in errors[0] and "60s" in errors[0] and "10s limit" in errors[0]
