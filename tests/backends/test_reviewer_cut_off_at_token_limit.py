"""A reviewer's answer the server cut off at its token limit (``finish_reason: length``)
is never approved, and says it was cut off and which setting asks for more tokens, not
that the reviewer "answered in free text"."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from cli_process import run_cli
from phasegate.workflow.example_files import copy_example

PLAN = "# Plan\n\nCount requests.\n\n## Tasks\n\n- [ ] T1 Add the limiter\n"


@contextmanager
def cut_off_server() -> Iterator[str]:
    """A chat server whose every answer stops at the token limit mid-JSON."""
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": '{"verdict": "APPROVED", "summ'},
        "finish_reason": "length",
    }
    body = json.dumps(
        {"id": "x", "object": "chat.completion", "created": 0, "choices": [choice]}
    ).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def _repo(root: Path, url: str, limit: str) -> Path:
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
        f"  openai: {{base_url: '{url}', max_retries: 0{limit}}}\n"
    )
    made = run_cli(root, "new", "limits", "--workflow", "review-loop")
    assert made.returncode == 0, made.stderr
    return root


@pytest.mark.parametrize(
    ("limit", "advice"),
    [
        (", max_tokens: 16", "raise backends.openai.max_tokens, now 16"),
        ("", "set backends.openai.max_tokens to ask for more"),
    ],
)
def test_a_cut_off_review_names_the_token_limit(tmp_path: Path, limit: str, advice: str) -> None:
    with cut_off_server() as url:
        root = _repo(tmp_path / "repo", url, limit)
        done = run_cli(root, "run", "limits", "--until", "planning")
    output = done.stdout + done.stderr
    assert "approved" not in output.lower().replace("not approved", ""), output
    assert "answer was cut off at the" in output and "token limit" in output, output
    assert advice in output, output
    assert "answered in free text" not in output, output
