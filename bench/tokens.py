"""Benchmark (``make bench``): the tokens each agent call carries, per backend and role.

The feature workflow's first phase (brainstorm, ``hotfix`` mode: the executor
writes brainstorm.md, the chain reviewer approves it) runs once per backend:
the real pinned CLIs (claude, codex, gemini: ``make node``) and the ``openai``
HTTP backend, every one against the stub LLM server of ``phasegate.testing``
with scripted replies. The stub's request log gives, for each agent call:

- phasegate's prompt: the text phasegate wrote (instructions and prompt parts,
  journaled as ``prompt_chars``);
- the first model request, whole: what the agent sent with that prompt (its
  own system prompt, its tool definitions, the messages), as compact JSON
  bytes; then its system prompt and tool definitions alone, and how many
  tools it offers;
- every model request of the call together (each turn resends the
  conversation).

Token counts are estimates: characters or bytes / 4. Claude Code's executor
runs a second time with its full tool set (``tools: [default]``), so the
saving of phasegate's explicit set shows. A CLI that is not installed is
skipped. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer, ToolCall
from phasegate.testing.clis import STUB_API_KEY, find_cli, gemini_env
from phasegate.testing.dispatch_sizes import Dispatch, DispatchLog, estimated_tokens

REPO = Path(__file__).resolve().parents[1]
ITEM = "item"
BRAINSTORM = Path("docs/features") / ITEM / "brainstorm.md"
REQUEST = (
    "Add rate limiting to the public HTTP API: at most 100 requests a minute per API key, "
    "answered with 429 and a Retry-After header beyond that."
)
IDEAS = (
    "# Brainstorm\n\n## Problem\n\nOne client can exhaust the API for everyone.\n\n"
    "## Options\n\n- token bucket per key in memory\n- fixed window in Redis\n\n"
    "## Intent\n\nFair use per API key, visible to clients through Retry-After.\n"
)
APPROVE = {"approved": True, "issues": [], "summary": "Ready for the spec."}
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")


@dataclass(frozen=True)
class Case:
    """One run of the phase: a backend for every role, and how its model writes the file."""

    label: str
    backend: str
    cli: str | None
    settings: Callable[[StubLLMServer, Path, Path], dict[str, Any]]
    write: Callable[[Path], Reply]
    executor: dict[str, Any] | None = None
    roles: tuple[str, ...] = ("executor", "chain-reviewer")


def _claude(stub: StubLLMServer, home: Path, binary: Path) -> dict[str, Any]:
    return {
        "binary": str(binary),
        "model": "claude-sonnet-4-5",
        "base_url": stub.url,
        "config_dir": str(home / "claude-config"),
        "env": {
            "HOME": str(home),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            # Claude Code's own set offers Bash: measured as before, without its sandbox
            # (which needs bwrap and socat on Linux).
            "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB": "0",
        },
    }


def _codex(stub: StubLLMServer, home: Path, binary: Path) -> dict[str, Any]:
    return {
        "binary": str(binary),
        "model": "gpt-5.5",  # from Codex's bundled catalog, so it offers apply_patch
        "base_url": stub.openai_url,
        "config_dir": str(home / "codex-home"),
        "provider_options": {"request_max_retries": 0, "stream_max_retries": 0},
        "extra_args": ["--disable", "plugins", "-c", "analytics.enabled=false"],
        "env": {"HOME": str(home)},
    }


def _gemini(stub: StubLLMServer, home: Path, binary: Path) -> dict[str, Any]:
    gemini_home = home / "gemini-home"
    gemini_env(stub.url, gemini_home)  # selects API-key auth, no telemetry, one attempt
    return {
        "binary": str(binary),
        "model": "gemini-2.5-flash",
        "base_url": stub.url,
        "config_dir": str(gemini_home),
        "env": {"HOME": str(home)},
    }


def _openai(stub: StubLLMServer, home: Path, binary: Path) -> dict[str, Any]:
    return {"base_url": stub.openai_url, "model": "stub-chat-model"}


def _patch(root: Path) -> Reply:
    lines = "".join(f"+{line}\n" for line in IDEAS.splitlines())
    patch = f"*** Begin Patch\n*** Add File: {BRAINSTORM}\n{lines}*** End Patch\n"
    return Reply(tool_calls=(ToolCall("apply_patch", input=patch),))


def _files_json(root: Path) -> Reply:
    files = [{"path": str(BRAINSTORM), "content": IDEAS}]
    return Reply.json({"summary": "Wrote brainstorm.md", "files": files, "delete": []})


CASES = (
    Case(
        "claude",
        "claude",
        "claude",
        _claude,
        lambda root: Reply.tool("Write", file_path=str(root / BRAINSTORM), content=IDEAS),
    ),
    Case(
        "claude, tools: [default]",
        "claude",
        "claude",
        _claude,
        lambda root: Reply.tool("Write", file_path=str(root / BRAINSTORM), content=IDEAS),
        executor={"tools": ["default"]},
        roles=("executor",),
    ),
    Case("codex", "codex", "codex", _codex, _patch),
    Case(
        "gemini",
        "gemini",
        "gemini",
        _gemini,
        lambda root: Reply.tool("write_file", file_path=str(root / BRAINSTORM), content=IDEAS),
    ),
    Case("openai", "openai", None, _openai, _files_json),
)


class Skipped(Exception):
    """A case that cannot run here (its CLI is not installed)."""


def _git_repo(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "README.md").write_text("# api\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def measure(case: Case, workdir: Path) -> list[Dispatch]:
    """Run the brainstorm phase of ``case`` against the stub; its agent calls, measured."""
    binary = find_cli(case.cli, REPO) if case.cli else None
    if case.cli and binary is None:
        raise Skipped(f"{case.cli} is not installed (make node)")
    root, home = workdir / "repo", workdir / "home"
    _git_repo(root)
    home.mkdir()
    holder: list[DispatchLog] = []

    def model(request: LoggedRequest) -> Reply:
        if holder[0].role != "executor":
            return Reply.json(APPROVE)
        if request.tool_result:
            return Reply(text="Wrote brainstorm.md")
        return case.write(root)

    script = Script(anthropic=[model], openai=[model], gemini=[model])
    with StubLLMServer(script) as stub:
        log = DispatchLog(stub.model_requests)
        holder.append(log)
        settings = case.settings(stub, home, binary or Path())
        executor = {"backend": case.backend, **(case.executor or {})}
        config = {
            "retries": {"agent": 0},
            "timeouts": {"agent": 180},
            "roles": {"default": {"backend": case.backend}, "executor": executor},
            "backends": {case.backend: settings},
        }
        repo = Repo(root, Config.model_validate(config))
        repo.new(ITEM, mode="hotfix", description=REQUEST)
        outcome = repo.run(ITEM, options=RunOptions(until="brainstorm"), sink=log)
    if (root / BRAINSTORM).read_text() != IDEAS:
        raise RuntimeError(f"{case.label}: brainstorm.md was not written ({outcome.status})")
    return [d for d in log.dispatches if d.role in case.roles]


HEADER = (
    f"{'backend':<25} {'role':<15} {'prompt chars':>12} {'~tok':>6} {'request B':>10} "
    f"{'~tok':>6} {'system ch':>10} {'tool defs B':>11} {'tools':>5} {'reqs':>4} "
    f"{'all reqs B':>10} {'~tok':>6}"
)


def row(label: str, dispatch: Dispatch) -> str:
    """One table line for one agent call."""
    return (
        f"{label:<25} {dispatch.role:<15} {dispatch.prompt_chars:>12} "
        f"{estimated_tokens(dispatch.prompt_chars):>6} {dispatch.first_bytes:>10} "
        f"{estimated_tokens(dispatch.first_bytes):>6} {dispatch.system_chars:>10} "
        f"{dispatch.tool_bytes:>11} {len(dispatch.tools):>5} {len(dispatch.requests):>4} "
        f"{dispatch.total_bytes:>10} {estimated_tokens(dispatch.total_bytes):>6}"
    )


def _version(case: Case) -> str:
    binary = find_cli(case.cli, REPO) if case.cli else None
    if binary is None:
        return ""
    found = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    return found.stdout.strip().splitlines()[0] if found.stdout.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", help="run only this backend (repeatable)")
    args = parser.parse_args()
    # Outside the temporary folder: with a system bwrap (which `make test` installs),
    # Codex will not make its sandbox helper in a CODEX_HOME under $TMPDIR or /tmp.
    (REPO / ".bench").mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tokens-", dir=REPO / ".bench"))
    # The CLIs read the provider key from phasegate's environment: a dummy one, so a
    # real key is never handed to anything; the CLI probe cache stays in the scratch dir.
    for name in PROVIDER_KEYS:
        os.environ[name] = STUB_API_KEY
    os.environ["XDG_CACHE_HOME"] = str(scratch / "cache")
    print(
        "Tokens per agent call: the feature workflow's brainstorm phase (hotfix), each backend "
        "against the stub LLM server.\n~tok = chars (or bytes) / 4, an estimate. "
        "request B = the call's first model request (compact JSON); all reqs B = all its "
        "model requests."
    )
    print(HEADER)
    measured: dict[str, list[Dispatch]] = {}
    failed: list[str] = []
    try:
        for index, case in enumerate(CASES):
            if args.only and case.backend not in args.only:
                continue
            try:
                found = measure(case, scratch / f"case-{index}")
            except Skipped as skipped:
                print(f"{case.label:<25} skipped: {skipped}")
                continue
            except Exception as exc:  # one backend failing must not hide the others' figures
                print(f"{case.label:<25} FAILED: {type(exc).__name__}: {exc}")
                failed.append(case.label)
                continue
            measured[case.label] = found
            version = _version(case)
            for dispatch in found:
                print(row(case.label, dispatch))
            if version:
                print(f"{'':<25} ({version})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("Tools offered (first request of each call):")
    for label, found in measured.items():
        for dispatch in found:
            names = ", ".join(dispatch.tools) or "none"
            print(f"  {label} {dispatch.role}: {names}")
    explicit = [d for d in measured.get("claude", []) if d.role == "executor"]
    full = measured.get("claude, tools: [default]", [])
    if explicit and full:
        small, big = explicit[0].first_bytes, full[0].first_bytes
        print(
            f"Claude Code executor, first request: {small} B with phasegate's tool set "
            f"({len(explicit[0].tools)} tools) against {big} B with its full set "
            f"({len(full[0].tools)} tools): {1 - small / big:.0%} smaller."
        )
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
