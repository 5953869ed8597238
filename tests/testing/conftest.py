"""Fixtures for the stub LLM server tests: raw HTTP, SSE parsing, real CLI runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import StubLLMServer
from phasegate.testing.clis import base_env, find_cli

REPO = Path(__file__).resolve().parents[2]
CLI_TIMEOUT = 60.0


@dataclass
class HttpResult:
    """A raw HTTP answer: status, headers (lower-case names) and body bytes."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def sse(self) -> list[tuple[str | None, Any]]:
        """The body as SSE events: ``(event name or None, parsed data)``."""
        events: list[tuple[str | None, Any]] = []
        for block in self.body.decode().split("\n\n"):
            name, data = None, []
            for line in block.splitlines():
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
            if data:
                payload = "\n".join(data)
                events.append((name, payload if payload == "[DONE]" else json.loads(payload)))
        return events


PostJson = Callable[..., HttpResult]


@pytest.fixture
def post_json() -> PostJson:
    """POST a JSON body (or raw bytes) and return the answer, HTTP errors included."""

    def post(
        url: str,
        body: Any,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
    ) -> HttpResult:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return HttpResult(
                    response.status,
                    {k.lower(): v for k, v in response.headers.items()},
                    response.read(),
                )
        except urllib.error.HTTPError as exc:
            return HttpResult(exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read())

    return post


@dataclass
class CliRun:
    """Where a real CLI runs: its isolated HOME and its working directory."""

    home: Path
    work: Path

    def env(self, **overlay: str) -> dict[str, str]:
        return {**base_env(self.home), **overlay}

    def run(
        self, argv: list[str], env: Mapping[str, str], timeout: float = CLI_TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            cwd=self.work,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def assert_hangs(self, argv: list[str], env: Mapping[str, str], stub: StubLLMServer) -> None:
        """Start the CLI, wait for its model request, and check it is still running."""
        proc = subprocess.Popen(
            argv,
            cwd=self.work,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Own process group: codex's Node launcher leaves its native child
            # running (holding the pipes) when only the launcher is killed.
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 30
            while not stub.model_requests() and time.monotonic() < deadline:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.1)
            assert stub.model_requests(), "the CLI never reached the stub"
            time.sleep(2.0)
            assert proc.poll() is None, "the CLI finished although the model never answered"
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=10)


@pytest.fixture
def cli_run(tmp_path: Path) -> CliRun:
    """A fresh HOME and working directory for one CLI run."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    return CliRun(home, work)


def _cli(name: str) -> Path:
    path = find_cli(name, REPO)
    if path is None:
        pytest.skip(f"node_modules/.bin/{name} is not installed (run `npm ci` at the repo root)")
    return path


@pytest.fixture
def claude_bin() -> Path:
    """The pinned Claude Code binary (skips when not installed)."""
    return _cli("claude")


@pytest.fixture
def codex_bin() -> Path:
    """The pinned Codex CLI (skips when not installed)."""
    return _cli("codex")


@pytest.fixture
def gemini_bin() -> Path:
    """The pinned Gemini CLI (skips when not installed)."""
    return _cli("gemini")
