"""A call the server refuses for a reason retrying cannot fix (a bad API key, an unknown
model) fails at once: phasegate's own attempts (``retries.agent``) are not spent on it,
and the run stops on the agent (exit 6) naming what to check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import init_git_repo
from ruamel.yaml import YAML

from cli_process import run_cli
from phasegate.testing import Reply, Script, StubLLMServer


def _repo(tmp_path: Path, base_url: str) -> Path:
    root = init_git_repo(tmp_path / "repo")
    (root / ".phasegate").mkdir()
    config = {
        "roles": {"default": {"backend": "openai"}},
        "backends": {"openai": {"model": "stub", "max_retries": 3, "base_url": base_url}},
        "retries": {"agent": 2},
    }
    with open(root / ".phasegate" / "config.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(config, handle)
    created = run_cli(root, "new", "demo", "-d", "Add rate limiting")
    assert created.returncode == 0, created.stderr
    return root


def _events(root: Path) -> list[dict[str, Any]]:
    journal = root / "docs" / "features" / "demo" / ".journal.jsonl"
    return [json.loads(x) for x in journal.read_text().splitlines()]


@pytest.mark.parametrize(
    ("status", "message", "advice"),
    [
        (401, "Incorrect API key provided", "check the API key"),
        (403, "Forbidden", "check the API key"),
        (404, "The model `stub` does not exist", "check the model name 'stub'"),
    ],
)
def test_a_refused_call_is_made_once(
    tmp_path: Path, status: int, message: str, advice: str
) -> None:
    script = Script(default=Reply.fail(status, message))
    with StubLLMServer(script) as stub:
        root = _repo(tmp_path, stub.openai_url)
        result = run_cli(root, "run", "demo", "--until", "brainstorm")
        calls = stub.model_requests("openai")
    assert result.returncode == 6, (result.stdout, result.stderr)
    assert len(calls) == 1, f"{len(calls)} requests for a call that cannot succeed"
    failed = [e for e in _events(root) if e["event"] == "agent.failed"]
    assert len(failed) == 1
    errors = [x for x in result.stderr.splitlines() if x.startswith("phasegate: error")]
    assert len(errors) == 1, result.stderr
    assert f"HTTP {status}" in errors[0] and advice in errors[0]
    assert "after 3 attempts" not in errors[0]
    assert "not tried again" in errors[0]


def test_a_server_error_is_still_retried(tmp_path: Path) -> None:
    script = Script(default=Reply.fail(500, "overloaded"))
    with StubLLMServer(script) as stub:
        root = _repo(tmp_path, stub.openai_url)
        root_config = root / ".phasegate" / "config.yaml"
        root_config.write_text(root_config.read_text().replace("max_retries: 3", "max_retries: 0"))
        result = run_cli(root, "run", "demo", "--until", "brainstorm")
        calls = stub.model_requests("openai")
    assert result.returncode == 6, (result.stdout, result.stderr)
    assert len(calls) == 3
    assert "after 3 attempts" in result.stderr
