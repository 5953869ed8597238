"""Helpers for backend tests: settings that point each real CLI at the stub, requests, fakes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from codex_homes import codex_home
from phasegate.agents.base import Access, AgentRequest, AgentResult, PromptPart
from phasegate.agents.claude import ClaudeBackend
from phasegate.agents.cli_support import CliBackend
from phasegate.agents.codex import CodexBackend
from phasegate.agents.gemini import GeminiBackend
from phasegate.testing import StubLLMServer
from phasegate.testing.clis import find_cli, gemini_env
from phasegate.verdicts import ReadContext
from phasegate.verdicts.readers import APPROVAL

#: The schema of seed 000's approval review, as reviewers are handed it.
VERDICT_SCHEMA = APPROVAL.schema(ReadContext())


class Reading:
    """How a reviewer's answer was read: approved or not, and from where."""

    def __init__(self, result: AgentResult) -> None:
        verdict = APPROVAL.read(result, ReadContext())
        self.verdict = verdict
        self.source = verdict.source
        self.approved = verdict.word == "APPROVED"


def read_verdict(result: AgentResult) -> Reading:
    """Read ``result`` as the engine reads an approval review."""
    return Reading(result)


REPO = Path(__file__).resolve().parents[2]
#: The provider keys handed to the CLIs (through phasegate's environment, like a user's).
STUB_KEY = "stub-provider-key-0123456789"
CLAUDE_MODEL = "claude-sonnet-4-5"
CODEX_MODEL = "gpt-5.5"  # from Codex's bundled catalog, so it offers apply_patch
GEMINI_MODEL = "gemini-2.5-flash"
APPROVE = {"approved": True, "issues": [], "summary": "complete"}
BLOCKER = {"severity": "blocker", "description": "No acceptance criteria", "location": "spec.md"}
REJECT = {"approved": False, "issues": [BLOCKER], "summary": "needs acceptance criteria"}


def cli_path(name: str) -> Path | None:
    """The pinned CLI ``name`` in the repository's node_modules, if installed."""
    return find_cli(name, REPO)


def claude_settings(stub: StubLLMServer, home: Path, **extra: Any) -> dict[str, Any]:
    """Claude Code against the stub: isolated config dir, no side traffic, no retries."""
    binary = cli_path("claude")
    return {
        "binary": str(binary),
        "model": CLAUDE_MODEL,
        "base_url": stub.url,
        "config_dir": str(home / "claude-config"),
        "env": {
            "HOME": str(home),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        },
        **extra,
    }


def codex_settings(stub: StubLLMServer, home: Path, **extra: Any) -> dict[str, Any]:
    """Codex against the stub: its own CODEX_HOME (outside the temporary folder, see
    codex_homes), no plugin sync, no provider retries."""
    binary = cli_path("codex")
    return {
        "binary": str(binary),
        "model": CODEX_MODEL,
        "base_url": stub.openai_url,
        "config_dir": str(codex_home(home)),
        "provider_options": {"request_max_retries": 0, "stream_max_retries": 0},
        "extra_args": ["--disable", "plugins", "-c", "analytics.enabled=false"],
        "env": {"HOME": str(home)},
        **extra,
    }


def gemini_settings(stub: StubLLMServer, home: Path, **extra: Any) -> dict[str, Any]:
    """Gemini CLI against the stub: API-key auth selected, one attempt per request."""
    binary = cli_path("gemini")
    gemini_home = home / "gemini-home"
    gemini_env(stub.url, gemini_home)  # writes gemini_home/.gemini/settings.json
    return {
        "binary": str(binary),
        "model": GEMINI_MODEL,
        "base_url": stub.url,
        "config_dir": str(gemini_home),
        "env": {"HOME": str(home)},
        **extra,
    }


def openai_settings(stub: StubLLMServer, **extra: Any) -> dict[str, Any]:
    """The openai backend against the stub's chat completions."""
    return {"base_url": stub.openai_url, "model": "stub-chat-model", **extra}


def make_request(
    workdir: Path,
    prompt: str = "Say hello.",
    *,
    access: Access = Access.READ_ONLY,
    schema: dict[str, Any] | None = None,
    timeout: float = 60.0,
    **fields: Any,
) -> AgentRequest:
    """A one-part request for role ``tester``."""
    return AgentRequest(
        role="tester",
        prompt=(PromptPart("Task", prompt),),
        workdir=workdir,
        access=access,
        output_schema=schema,
        timeout=timeout,
        **fields,
    )


FAKE_CLI = """\
import json, os, sys, time
mode = os.environ.get("FAKE_MODE", "echo")
log = os.environ.get("FAKE_PROBE_LOG")
if log and ("--version" in sys.argv or "--help" in sys.argv):
    with open(log, "a") as stream:
        stream.write(" ".join(sys.argv[1:]) + "\\n")
if "--version" in sys.argv:
    print(os.environ.get("FAKE_VERSION", "fake-cli 9.9.9"))
    sys.exit(0)
if "--help" in sys.argv:
    print(HELP)
    sys.exit(0)
if mode == "exit-early":
    sys.stderr.write("fatal: could not start the agent\\n")
    sys.exit(3)
if mode == "stderr":
    sys.stdin.read()
    sys.stderr.write(os.environ["FAKE_STDERR"])
    sys.exit(1)
if mode == "flood":
    chunk = b"x" * 65536
    for _ in range(int(os.environ.get("FAKE_MB", "40")) * 16):
        sys.stdout.buffer.write(chunk)
    sys.exit(0)
prompt = sys.stdin.read()
if mode == "bad-bytes":
    sys.stdout.buffer.write(b'{"result": "caf\\xe9 \\xff done", "is_error": false}')
    sys.exit(0)
report = {"argv": sys.argv[1:], "env": sorted(os.environ), "prompt": prompt, "cwd": os.getcwd()}
print(json.dumps({"result": json.dumps(report), "is_error": False, "session_id": "fake"}))
"""


def help_listing(*backends: type[CliBackend], without: tuple[str, ...] = ()) -> str:
    """A ``--help`` text listing every flag the backends check (minus ``without``)."""
    lines = ["Options:"]
    for backend in backends:
        for check in backend.required_flags:
            if check.flag in without:
                continue
            choices = f"  (choices: {check.value})" if check.value else ""
            lines.append(f"  {check.flag} <value>   what it does{choices}")
    return "\n".join(lines)


def fake_cli(directory: Path, name: str = "fake-claude", help_text: str | None = None) -> Path:
    """An executable stand-in for an agent CLI (modes in ``FAKE_MODE``; see FAKE_CLI).

    Its ``--help`` prints ``help_text`` (default: every flag the claude, codex
    and gemini backends check); with ``FAKE_PROBE_LOG`` set it appends each
    ``--version`` / ``--help`` call to that file.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    if help_text is None:
        help_text = help_listing(ClaudeBackend, CodexBackend, GeminiBackend)
    script = f"#!{sys.executable}\nHELP = {help_text!r}\n{FAKE_CLI}"
    path.write_text(script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_settings(binary: Path, mode: str, **extra: Any) -> dict[str, Any]:
    """Settings running ``binary`` in ``mode``."""
    env = {"FAKE_MODE": mode, **extra.pop("env", {})}
    return {"binary": str(binary), "env": env, **extra}


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def init_git_repo(root: Path) -> Path:
    """A git repository with one commit (README.md)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# sample\n")
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
    return root
